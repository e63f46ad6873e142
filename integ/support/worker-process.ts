/**
 * The fault tests' worker processes: the harness's (src/testing/fault-harness/worker-process.ts)
 * with what every fault test gives them: fault-functions.ts unless told, the execution log it
 * appends to (execution-log.ts), and the waits scaled by ZK_PLAN_TIMING.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { WorkerSpec } from '../../src/testing/fault-harness/worker-process.js';
import { FAULT_LOG_ENV } from './execution-log.js';
import { TIMING } from './zk-test-env.js';

export {
  WorkerFleet,
  WorkerProcess,
  describeExit,
  isProcessAlive,
  type ProcessExit,
  type WorkerSpec,
} from '../../src/testing/fault-harness/worker-process.js';

const HERE = dirname(fileURLToPath(import.meta.url));

/** The task functions every worker loads unless its spec names another module. */
export const FAULT_FUNCTIONS_MODULE = join(HERE, 'fault-functions.ts');

/** A fault test's worker: the log its functions append to, and the functions module when not fault-functions.ts. */
export interface FaultWorkerSpec extends Omit<WorkerSpec, 'functionsModule' | 'env' | 'timeScale'> {
  /** The execution log the functions append to. */
  readonly logFile: string;
  /** `--functions`. @defaultValue FAULT_FUNCTIONS_MODULE */
  readonly functionsModule?: string;
}

/** The worker spec of a fault test's process: its log in the environment, waits scaled by TIMING. */
export function faultWorkerSpec({
  logFile,
  functionsModule,
  ...rest
}: FaultWorkerSpec): WorkerSpec {
  return {
    ...rest,
    functionsModule: functionsModule ?? FAULT_FUNCTIONS_MODULE,
    env: { [FAULT_LOG_ENV]: logFile },
    timeScale: TIMING,
  };
}
