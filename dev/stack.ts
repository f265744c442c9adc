/** Something the runner started and must stop: a server, the worker, the API. */
export interface Service {
  name: string;
  /** Settles when it ends, saying how. */
  exited: Promise<string>;
  stop(): Promise<void>;
}

/** Thrown into a start-up that is still running when a stop was requested. */
class StopRequested extends Error {}

/**
 * The services in start order, stopped in reverse: the API before the worker before Temporal
 * before PostgreSQL, so nothing loses a dependency while it is still working.
 */
export class Stack {
  private readonly services: Service[] = [];
  private stopping: Promise<void> | undefined;

  add<T extends Service>(service: T): T {
    if (this.stopping) {
      void service.stop();
      throw new StopRequested();
    }
    this.services.push(service);
    return service;
  }

  /** The first service to end on its own, and how. */
  firstExit(): Promise<{ name: string; how: string }> {
    return Promise.race(this.services.map(({ name, exited }) => exited.then((how) => ({ name, how }))));
  }

  stopAll(): Promise<void> {
    this.stopping ??= (async () => {
      for (const service of [...this.services].reverse()) {
        console.log(`Stopping ${service.name} …`);
        await service.stop();
      }
    })();
    return this.stopping;
  }
}
