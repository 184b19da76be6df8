-- Least discriminating published tasks: whose checks best fail to tell a real solution from a shortcut.
-- Run: coworkenv sql --file sql/queries/least_discriminating_tasks.sql
select
    release_id,
    task_id,
    family,
    difficulty,
    round(discrimination, 3) as discrimination,
    n_checks,
    n_prohibited
from stg_tasks
where discrimination < 1
order by discrimination, task_id
limit 20
