-- Coverage gaps: the thinnest capability × difficulty cells (no or fewest valid tasks), what to generate next.
-- Run: coworkenv sql --file sql/queries/coverage_gaps.sql
select
    release_id,
    capability,
    difficulty,
    n_valid,
    n_primary_valid,
    is_gap
from coverage_difficulty_capability
qualify row_number() over (partition by release_id order by n_valid, n_primary_valid, capability, difficulty) <= 10
order by release_id, n_valid, n_primary_valid, capability, difficulty
