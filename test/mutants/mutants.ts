/**
 * Known defects, kept outside the product: each mutant is a text patch that the vitest project of
 * the same name applies to one module of src/ as it loads (vitest.config.ts, `mutantPlugin`), for
 * the simulation self-tests in test/mutants/*.mutant.test.ts. Nothing in src/ can switch a defect
 * back on. A patch whose text is no longer in its file fails the load, naming the mutant, so a
 * refactor cannot quietly turn a self-test into one that tests nothing.
 */
export interface Mutant {
  /** The project's and the self-test file's name: test/mutants/<name>.mutant.test.ts. */
  readonly name: string;
  /** The module the patches apply to, relative to the repository. */
  readonly file: string;
  /** Each replaces a text of that module (found exactly once) with another. */
  readonly patches: readonly { readonly find: string; readonly replace: string }[];
  /** The defect it puts back, and where it was first found. */
  readonly defect: string;
  /** The seed its self-test's search starts at: the first that caught it when last searched from seed 1 (search-seeds.ts). */
  readonly searchFrom: number;
}

export const MUTANTS: readonly Mutant[] = [
  {
    name: 'slot-release-resent',
    file: 'src/limits/concurrency-limits.ts',
    patches: [
      {
        find: 'await this.zk.delete(path, slot.stat.version, { fence: session, incarnation: slot.stat.czxid })',
        replace: 'await this.zk.delete(path, slot.stat.version)',
      },
    ],
    defect:
      "issue 19, defect 1: a slot's release, sent again after a lost reply (through the next session or the same one), deletes the slot another worker took meanwhile, and a limit of 1 runs two tasks at once",
    searchFrom: 601,
  },
  {
    name: 'slot-take-unfenced',
    file: 'src/limits/concurrency-limits.ts',
    patches: [{ find: "await this.zk.create(path, bytes, 'ephemeral', { fence: session });", replace: "await this.zk.create(path, bytes, 'ephemeral');" }],
    defect:
      "issue 19, defect 2: a slot's take, sent again through the next session, makes a slot the next session holds that no lease knows: the key stays blocked until the process ends",
    searchFrom: 260,
  },
  {
    name: 'tick-record-pruned-while-named',
    file: 'src/schedule/scheduler.ts',
    patches: [
      { find: 'const named = new Set(cursor.fire.map(cronTickId));', replace: 'const named = new Set<string>();' },
      {
        find: 'now - (seen.get(id) ?? now) >= DEFAULTS.schedule.keepTicksMs',
        replace: "now - Number(id.split('-')[1]) > DEFAULTS.schedule.keepTicksMs",
      },
      {
        find: 'await store.prune(schedule.name, ids, prunable, DEFAULTS.schedule.keepTicks, cursor, stillNeeded);',
        replace: 'await store.prune(schedule.name, ids, prunable, DEFAULTS.schedule.keepTicks, { ...cursor, fire: [] }, stillNeeded);',
      },
    ],
    defect:
      'issue 19, defect 3: tick records beyond the newest 50 are pruned once their tick is 10 minutes old, while the cursor still names them; every pass makes them again, pending, and they fire a second time',
    searchFrom: 27,
  },
  {
    name: 'lease-write-resent',
    file: 'src/jobs/job-store.ts',
    patches: [
      {
        find: "const stat = await this.setIfVersion(path, encodeValue(record, 'lease', path), read.version, { ...fence, incarnation: read.czxid });",
        replace: "const stat = await this.setIfVersion(path, encodeValue(record, 'lease', path), read.version, fence);",
      },
    ],
    defect:
      'issue 19, defect 4: a lease take sent again after a reconnect lands on the lease node of an item that left the pool and came back, taken since by another worker: two live holders, and a token that goes down',
    searchFrom: 5,
  },
];
