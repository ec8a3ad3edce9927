/** At most `max` holders at once; the others wait in order, and a release hands the slot on. */
export class ConcurrencyLimit {
  readonly #queue: (() => void)[] = [];
  #active = 0;

  constructor(private readonly max: number) {}

  async acquire(): Promise<void> {
    if (this.#active < this.max) {
      this.#active++;
      return;
    }
    await new Promise<void>((resolve) => this.#queue.push(resolve));
  }

  release(): void {
    const next = this.#queue.shift();
    if (next === undefined) this.#active--;
    else next();
  }

  /** Lets every waiter through, to find the work closed. */
  releaseAll(): void {
    for (const waiting of this.#queue.splice(0)) waiting();
  }
}
