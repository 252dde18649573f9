// Each connection's recent record (issue 19): when it last failed a request (any failure that
// fails over). It orders, never gates: the last-resort probe and an OPEN breaker's probe go to the
// key whose last failure is oldest (a key failing right now is the least likely to answer), and
// a guessed exclusion is probed only once its key's last failure is a little old. Process memory.
export class RecentFailures {
  private readonly failed = new Map<string, number>();

  onFailure(connectionId: string, now: number): void {
    this.failed.set(connectionId, now);
  }

  /** When the connection last failed a request; -Infinity when never (in this process). */
  failedAt(connectionId: string): number {
    return this.failed.get(connectionId) ?? -Infinity;
  }

  forget(connectionId: string): void {
    this.failed.delete(connectionId);
  }
}
