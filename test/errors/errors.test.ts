import { describe, expect, it } from 'vitest';
import { ZkPlanError } from '../../src/errors/base-error.js';
import {
  ArgTaskNotFoundError,
  ForeignArgTaskError,
  PlanNotFoundError,
  ResultNotFoundError,
} from '../../src/errors/plan-errors.js';
import { ZooKeeperNotFoundError, ZooKeeperStartError } from '../../src/errors/server-errors.js';
import {
  DrainTimeoutError,
  InlineDisabledError,
  MalformedNodeError,
  OwnershipLostError,
  TaskExecutionError,
  UnknownFunctionError,
  UnserializableValueError,
} from '../../src/errors/task-errors.js';
import {
  ShellDisabledError,
  ShellExitError,
  ShellParamsError,
  ShellStartError,
} from '../../src/errors/shell-errors.js';
import {
  IllegalStateError,
  InvalidArgumentError,
  WaitTimeoutError,
} from '../../src/errors/usage-errors.js';
import { DuplicateTaskKeyError, TaskKeyNotFoundError } from '../../src/errors/task-key-errors.js';
import {
  ZkConnectTimeoutError,
  ZkError,
  isZkError,
  zkErrorCodeOf,
  type ZkErrorCode,
} from '../../src/errors/zk-error.js';

const PLAN = '/plans/plan-0000000001';
const TASK = `${PLAN}/task-0000000002`;

/** One instance of every ZkPlanError subclass, with its class name and stable code. */
const ZK_PLAN_ERRORS: ReadonlyArray<[string, ZkPlanError, string]> = [
  ['ArgTaskNotFoundError', new ArgTaskNotFoundError(TASK, 'does not exist'), 'ARG_TASK_NOT_FOUND'],
  [
    'ForeignArgTaskError',
    new ForeignArgTaskError(TASK, '/plans/plan-0000000009'),
    'ARG_TASK_IN_OTHER_PLAN',
  ],
  ['PlanNotFoundError', new PlanNotFoundError(PLAN), 'PLAN_NOT_FOUND'],
  [
    'ResultNotFoundError',
    new ResultNotFoundError(TASK, `${PLAN}/result-0000000002`),
    'RESULT_NOT_FOUND',
  ],
  ['UnknownFunctionError', new UnknownFunctionError('nope', TASK, ['sum']), 'UNKNOWN_FUNCTION'],
  ['InlineDisabledError', new InlineDisabledError(TASK), 'INLINE_DISABLED'],
  ['ShellExitError', new ShellExitError(TASK, 'make', { exitCode: 2 }, ['boom']), 'SHELL_EXIT'],
  [
    'ShellStartError',
    new ShellStartError(TASK, 'make', 'make does not exist', new Error('ENOENT')),
    'SHELL_START_FAILED',
  ],
  [
    'ShellParamsError',
    new ShellParamsError(`task ${TASK}`, '"command" must be a non-empty string', TASK),
    'SHELL_INVALID_PARAMS',
  ],
  ['ShellDisabledError', new ShellDisabledError(TASK), 'SHELL_DISABLED'],
  ['MalformedNodeError', new MalformedNodeError(TASK, 'bad'), 'MALFORMED_NODE'],
  [
    'UnserializableValueError',
    new UnserializableValueError('params', 'params[0] is a function'),
    'UNSERIALIZABLE_VALUE',
  ],
  ['TaskExecutionError', new TaskExecutionError(TASK, 'boom', new Error('boom')), 'TASK_FAILED'],
  ['OwnershipLostError', new OwnershipLostError(TASK, 'session expired'), 'OWNERSHIP_LOST'],
  ['DrainTimeoutError', new DrainTimeoutError(30_000), 'DRAIN_TIMEOUT'],
  ['InvalidArgumentError', new InvalidArgumentError('count', 'must be ≥ 1'), 'INVALID_ARGUMENT'],
  ['IllegalStateError', new IllegalStateError('closed'), 'ILLEGAL_STATE'],
  ['WaitTimeoutError', new WaitTimeoutError(PLAN, 1000, 3), 'WAIT_TIMEOUT'],
  ['DuplicateTaskKeyError', new DuplicateTaskKeyError(PLAN, 'load-eu', TASK), 'TASK_KEY_TAKEN'],
  ['TaskKeyNotFoundError', new TaskKeyNotFoundError(PLAN, 'load-eu'), 'TASK_KEY_NOT_FOUND'],
  ['ZkError', new ZkError('get', -101, TASK), 'NO_NODE'],
  ['ZkConnectTimeoutError', new ZkConnectTimeoutError('127.0.0.1:2181', 500), 'CONNECT_TIMEOUT'],
];

describe('ZkPlanError subclasses', () => {
  it.each(ZK_PLAN_ERRORS)('%s is an Error and a ZkPlanError', (_name, error) => {
    expect(error instanceof ZkPlanError).toBe(true);
    expect(error instanceof Error).toBe(true);
  });

  it.each(ZK_PLAN_ERRORS)('%s has name equal to its class name', (name, error) => {
    expect(error.name).toBe(name);
    expect(error.constructor.name).toBe(name);
    expect(String(error).startsWith(`${name}: `)).toBe(true);
  });

  it.each(ZK_PLAN_ERRORS)('%s has the stable code %s', (_name, error, code) => {
    expect(error.code).toBe(code);
  });

  it('keeps subclass checks specific', () => {
    expect(new InvalidArgumentError('x', 'y') instanceof ZkError).toBe(false);
    expect(new ZkError('get', -101, '/a') instanceof InvalidArgumentError).toBe(false);
    expect(new ZkError('get', -101, '/a') instanceof ZkError).toBe(true);
  });

  it('carries path and cause', () => {
    const cause = new Error('root cause');
    const error = new TaskExecutionError(TASK, 'failed', cause);
    expect(error.path).toBe(TASK);
    expect(error.cause).toBe(cause);
    expect(new IllegalStateError('closed').path).toBeUndefined();
  });
});

describe('instanceof ZkPlanError across realms', () => {
  it('holds for a foreign object carrying the Symbol.for("zk-plan.error") marker', () => {
    const foreign = {
      message: 'from another copy',
      code: 'SOMETHING',
      [Symbol.for('zk-plan.error')]: true,
    };
    expect(foreign instanceof ZkPlanError).toBe(true);
  });

  it('holds for an error built by another copy of the class (other realm)', () => {
    const marker = Symbol.for('zk-plan.error');
    class OtherCopyError extends Error {
      constructor() {
        super('other copy');
        Object.defineProperty(this, marker, { value: true });
      }
    }
    expect(new OtherCopyError() instanceof ZkPlanError).toBe(true);
  });

  it('does not hold for plain errors, unmarked objects or primitives', () => {
    expect(new Error('plain') instanceof ZkPlanError).toBe(false);
    expect({ code: 'NO_NODE' } instanceof ZkPlanError).toBe(false);
    expect({ [Symbol('zk-plan.error')]: true } instanceof ZkPlanError).toBe(false);
    for (const value of [null, undefined, 'ZkPlanError', 42])
      expect((value as unknown) instanceof ZkPlanError).toBe(false);
  });

  it('does not make a marked foreign object an instance of a specific subclass', () => {
    const foreign = { [Symbol.for('zk-plan.error')]: true };
    expect(foreign instanceof ZkError).toBe(false);
    expect(foreign instanceof InvalidArgumentError).toBe(false);
  });
});

// The errors of the local-server helpers are exported from the package next to the others
// (startZooKeeper throws them); ZkPlanError is documented as the base class of every error zk-plan throws.
describe('server errors', () => {
  it('ZooKeeperNotFoundError and ZooKeeperStartError have their name and stable code', () => {
    const notFound = new ZooKeeperNotFoundError('no zookeeper');
    const start = new ZooKeeperStartError('did not start', { logFile: '/tmp/zk.log' });
    expect(notFound.name).toBe('ZooKeeperNotFoundError');
    expect(notFound.code).toBe('ZOOKEEPER_NOT_FOUND');
    expect(start.name).toBe('ZooKeeperStartError');
    expect(start.code).toBe('ZOOKEEPER_START_FAILED');
    expect(start.logFile).toBe('/tmp/zk.log');
  });

  it('ZooKeeperNotFoundError and ZooKeeperStartError are ZkPlanErrors', () => {
    expect(new ZooKeeperNotFoundError('no zookeeper') instanceof ZkPlanError).toBe(true);
    expect(new ZooKeeperStartError('did not start') instanceof ZkPlanError).toBe(true);
  });
});

describe('ZkError', () => {
  it.each<[number, ZkErrorCode]>([
    [-101, 'NO_NODE'],
    [-110, 'NODE_EXISTS'],
    [-111, 'NOT_EMPTY'],
    [-4, 'CONNECTION_LOSS'],
    [-112, 'SESSION_EXPIRED'],
    [-103, 'BAD_VERSION'],
    [-7, 'OPERATION_TIMEOUT'],
  ])('maps rc %i to %s', (rc, code) => {
    expect(zkErrorCodeOf(rc)).toBe(code);
    const error = new ZkError('create', rc, '/a');
    expect(error.code).toBe(code);
    expect(error.rc).toBe(rc);
  });

  it.each([-999, 0, 1, -1])('maps the unknown rc %i to UNKNOWN', (rc) => {
    expect(zkErrorCodeOf(rc)).toBe('UNKNOWN');
    expect(new ZkError('get', rc, '/a').code).toBe('UNKNOWN');
  });

  it('records op, rc and path and describes them in the default message', () => {
    const error = new ZkError('delete', -111, '/plans/plan-0000000001');
    expect(error.op).toBe('delete');
    expect(error.path).toBe('/plans/plan-0000000001');
    expect(error.message).toContain('delete');
    expect(error.message).toContain('/plans/plan-0000000001');
    expect(error.message).toContain('NOT_EMPTY');
  });

  it('uses a given message and cause', () => {
    const cause = new Error('native');
    const error = new ZkError('get', -4, '/a', 'custom message', cause);
    expect(error.message).toBe('custom message');
    expect(error.cause).toBe(cause);
  });

  it('isConnectionProblem is true for CONNECTION_LOSS and SESSION_EXPIRED, false for NO_NODE', () => {
    expect(new ZkError('get', -4, '/a').isConnectionProblem).toBe(true);
    expect(new ZkError('get', -112, '/a').isConnectionProblem).toBe(true);
    expect(new ZkError('get', -101, '/a').isConnectionProblem).toBe(false);
    expect(new ZkError('get', -110, '/a').isConnectionProblem).toBe(false);
  });
});

describe('isZkError', () => {
  const noNode = new ZkError('get', -101, '/a');

  it('without codes, holds for any ZkError', () => {
    expect(isZkError(noNode)).toBe(true);
    expect(isZkError(new ZkError('get', -999, '/a'))).toBe(true);
  });

  it('with codes, holds only when the code is among them', () => {
    expect(isZkError(noNode, 'NO_NODE')).toBe(true);
    expect(isZkError(noNode, 'NODE_EXISTS', 'NO_NODE')).toBe(true);
    expect(isZkError(noNode, 'NODE_EXISTS')).toBe(false);
    expect(isZkError(noNode, 'CONNECTION_LOSS', 'SESSION_EXPIRED')).toBe(false);
  });

  it('does not hold for other errors or values', () => {
    expect(isZkError(new InvalidArgumentError('x', 'y'))).toBe(false);
    expect(isZkError(new Error('NO_NODE'), 'NO_NODE')).toBe(false);
    expect(isZkError({ code: 'NO_NODE', rc: -101 }, 'NO_NODE')).toBe(false);
    expect(isZkError(undefined)).toBe(false);
  });
});
