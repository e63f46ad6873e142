/** What a ZkPlan needs for jobs: the `jobs(parent)` facade over its session, and the job workers it started (stopped by `close()`). */
import { assertValidPath } from '../zk/layout.js';
import { JobStore } from './job-store.js';
import { startJobWorker, type JobServiceParts, type JobWorkerHandle } from './job-service.js';
import type { JobWorkerOptions } from '../config/job-worker-options.js';
import { Jobs } from './jobs.js';

export type { Jobs, JobWorkerHandle, JobWorkerOptions };

export class JobWiring {
  private readonly running = new Set<JobWorkerHandle>();

  constructor(private readonly parts: JobServiceParts) {}

  jobs(parent: string): Jobs {
    assertValidPath('parent', parent);
    return new Jobs(new JobStore(this.parts.zk, parent));
  }

  start(parent: string, options: JobWorkerOptions): JobWorkerHandle {
    assertValidPath('parent', parent);
    const handle = startJobWorker(this.parts, parent, options);
    this.running.add(handle);
    return {
      ...handle,
      stop: async () => {
        this.running.delete(handle);
        await handle.stop();
      },
    };
  }

  async stopAll(): Promise<void> {
    const handles = [...this.running];
    this.running.clear();
    await Promise.all(handles.map((handle) => handle.stop()));
  }
}
