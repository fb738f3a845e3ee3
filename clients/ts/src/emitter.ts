// A small typed event emitter (no Node built-ins: the SDK runs in browsers and React Native).

export type Listener<T> = (event: T) => void;

export class Emitter<Events extends Record<string, unknown>> {
  private readonly listeners = new Map<keyof Events, Set<Listener<never>>>();

  /** Call `listener` on every `event`; returns a function that removes it. */
  on<K extends keyof Events>(event: K, listener: Listener<Events[K]>): () => void {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    set.add(listener as Listener<never>);
    return () => this.off(event, listener);
  }

  off<K extends keyof Events>(event: K, listener: Listener<Events[K]>): void {
    this.listeners.get(event)?.delete(listener as Listener<never>);
  }

  /** The next `event`, as a promise. */
  once<K extends keyof Events>(event: K): Promise<Events[K]> {
    return new Promise((resolve) => {
      const off = this.on(event, (value) => {
        off();
        resolve(value);
      });
    });
  }

  protected emit<K extends keyof Events>(event: K, value: Events[K]): void {
    for (const listener of [...(this.listeners.get(event) ?? [])]) {
      try {
        (listener as Listener<Events[K]>)(value);
      } catch (error) {
        // A listener's bug must not break the protocol state machine: report it asynchronously.
        setTimeout(() => {
          throw error;
        });
      }
    }
  }
}
