/**
 * The functions module of the fault harness's worker processes (`zk-plan worker --functions
 * <this module>`): loads the user's module (named by ZK_PLAN_HARNESS_FUNCTIONS, as `zk-plan worker
 * --functions` would) and hands the worker its functions wrapped to append every execution to the
 * log named by ZK_PLAN_HARNESS_LOG (recording-registry.ts).
 */
import { appendFileSync } from 'node:fs';
import { loadFunctions } from '../../cli/load-functions.js';
import { InvalidArgumentError } from '../../errors/usage-errors.js';
import { HARNESS_FUNCTIONS_ENV, HARNESS_LOG_ENV } from './execution-record.js';
import { recordingRegistry } from './recording-registry.js';

const logFile = process.env[HARNESS_LOG_ENV] ?? '';
const userModule = process.env[HARNESS_FUNCTIONS_ENV] ?? '';
// A worker without its log would run tasks that the harness cannot check: refuse to load instead.
if (logFile === '' || userModule === '')
  throw new InvalidArgumentError(
    '--functions',
    `this module is the fault harness's; it needs ${HARNESS_LOG_ENV} and ${HARNESS_FUNCTIONS_ENV} (runFaultHarness sets them)`,
  );

/**
 * The user's functions, recording. One appendFileSync (O_APPEND) per record: lines of several
 * processes never mix. Each record starts with a line break too, so that a line a killed process
 * left torn ends there and never swallows the next process's record.
 */
export const functions = recordingRegistry(await loadFunctions(userModule), (record) =>
  appendFileSync(logFile, `\n${JSON.stringify(record)}\n`),
);
