#!/usr/bin/env bash
# The whole test suite, as the README's test command and CI run it: set-up, static checks, then the
# unit tests (test/, in-memory ZooKeeper, with line coverage: src/worker, src/plan and src/store must
# each stay at or above 80 %, see vitest.config.ts), the seeded simulations (test/, in-memory
# ZooKeeper, without coverage) and the integration tests against real ZooKeeper servers (integ/).
# Each run writes its JSON report; print-test-summary.mjs adds them up into the one closing line and
# checks the coverage floor.
#
# Arguments are passed to both vitest runs (e.g. a name filter: -t 'retry'); with arguments the
# coverage floor is not checked, since a filtered run covers only part of the code.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/setup.sh || exit 1

# Static checks. Each tool runs on one core (its garbage collector aside), so they run in two lanes
# at once on the two cores: the linter alone, which takes about as long as all the others one after
# another. Each lane's output is kept and printed once both are done, the first lane's first.
type_checks_cycles_format() {
  # Three programs: the server side (Node), the web view's browser code and its tests (the DOM library).
  for project in tsconfig.json src/ui/browser/tsconfig.json test/browser/tsconfig.json; do
    npx tsc --noEmit -p "${project}" || { echo "typecheck (${project}): 0 passed, 1 failed"; return 1; }
  done
  # No import cycle in src/, types included.
  npx dpdm --no-warning --no-tree --exit-code circular:1 'src/**/*.ts' || { echo "import cycles: 0 passed, 1 failed"; return 1; }
  # Formatting (prettier, .prettierrc.json): `npm run format` fixes what this reports.
  npx prettier --check --log-level warn . || { echo "format: 0 passed, 1 failed"; return 1; }
}
# Guard rails: promises neither awaited nor handled, promises where a callback's result is ignored,
# type imports written as values (eslint.config.js).
lint() {
  npx eslint . || { echo "lint: 0 passed, 1 failed"; return 1; }
}
mkdir -p test-output
type_checks_cycles_format > test-output/static-checks.log 2>&1 &
checks_pid=$!
lint > test-output/lint.log 2>&1 &
lint_pid=$!
wait "${checks_pid}"
checks_status=$?
wait "${lint_pid}"
lint_status=$?
cat test-output/static-checks.log test-output/lint.log
if [ "${checks_status}" -ne 0 ] || [ "${lint_status}" -ne 0 ]; then exit 1; fi

rm -f test-output/unit-report.json test-output/simulation-report.json test-output/integ-report.json test-output/coverage/coverage-summary.json

coverage=(--coverage)
summary=(--coverage-summary test-output/coverage/coverage-summary.json)
if [ "$#" -gt 0 ]; then
  coverage=()
  summary=()
fi

status=0
# The unit tests and the simulations use every core: they are CPU-bound and need no server. The
# coverage floor is measured on the unit tests alone; the simulations (the project `simulations`,
# vitest.config.ts, and the mutants' self-tests) run apart without coverage, which slowed them by a
# fifth to a third. The integration tests keep vitest's default: their fault tests time real processes.
VITEST_JSON_REPORT=test-output/unit-report.json npx vitest run test/ --project zk-plan --maxWorkers=100% "${coverage[@]}" --passWithNoTests "$@" || status=1
VITEST_JSON_REPORT=test-output/simulation-report.json npx vitest run test/ --project simulations --project 'mutant:*' --maxWorkers=100% --passWithNoTests "$@" || status=1
VITEST_JSON_REPORT=test-output/integ-report.json npx vitest run integ/ --passWithNoTests "$@" || status=1
node scripts/print-test-summary.mjs test-output/unit-report.json test-output/simulation-report.json test-output/integ-report.json "${summary[@]}" || status=1
exit "${status}"
