-- discrimination_distribution: per family, a histogram of published tasks' discrimination scores (10 bins).
-- Answers "how well do a family's checks tell a real solution from an empty, partial or unsafe one?"
-- Bin b covers [b/10, (b+1)/10); the last bin includes 1.0. n_perfect counts tasks at exactly 1.0.
with tasks as (

    select
        release_id,
        family,
        discrimination,
        least(floor(discrimination * 10), 9)::integer as bin
    from stg_tasks
    where discrimination is not null

),

families as (

    select distinct release_id, family from tasks

),

grid as (

    select families.release_id, families.family, bins.bin
    from families
    cross join range(0, 10) as bins(bin)

),

counts as (

    select
        release_id,
        family,
        bin,
        count(*) as n_tasks,
        count(*) filter (where discrimination = 1.0) as n_perfect
    from tasks
    group by release_id, family, bin

),

binned as (

    select
        grid.release_id,
        grid.family,
        grid.bin::integer as bin,
        grid.bin / 10 as bin_low,
        (grid.bin + 1) / 10 as bin_high,
        coalesce(counts.n_tasks, 0) as n_tasks,
        coalesce(counts.n_perfect, 0) as n_perfect
    from grid
    left join counts using (release_id, family, bin)

)

select
    release_id,
    family,
    bin,
    bin_low,
    bin_high,
    n_tasks,
    n_perfect,
    n_tasks / sum(n_tasks) over (partition by release_id, family) as share,
    sum(n_tasks) over (partition by release_id, family order by bin) / sum(n_tasks) over (partition by release_id, family)
        as cumulative_share
from binned
order by release_id, family, bin
