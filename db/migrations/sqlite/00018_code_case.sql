-- +goose Up
-- A work centre's code is one regardless of case: "cut" and "CUT" are one
-- code. The catalog checks it (Unicode case folding, the same on both
-- databases); this index keeps two concurrent requests from both getting
-- through. A database may hold such codes already: the migration must not
-- fail on it, and must not rename what people print on route cards. The
-- centre created first keeps its code; every later one that repeats it in
-- another case is marked code_duplicate and left out of the index until its
-- code is changed (the catalog clears the mark then). GET /work-centers shows
-- them, so that a planner can rename them.
ALTER TABLE catalog_work_centers ADD COLUMN code_duplicate BOOLEAN NOT NULL DEFAULT false;
UPDATE catalog_work_centers SET code_duplicate = true
WHERE EXISTS (SELECT 1 FROM catalog_work_centers o
              WHERE lower(o.code) = lower(catalog_work_centers.code) AND o.id < catalog_work_centers.id);
CREATE UNIQUE INDEX catalog_work_centers_code_folded ON catalog_work_centers (lower(code)) WHERE NOT code_duplicate;

-- +goose Down
DROP INDEX catalog_work_centers_code_folded;
ALTER TABLE catalog_work_centers DROP COLUMN code_duplicate;
