// Request bodies' Buffers against V8's old-generation limit (issue 25).
//
// V8 (11.3, in Node 20) counts the memory held outside its heap that was allocated since its last
// full collection against the old generation's limit. A request body is such memory: Node copies
// each socket chunk into a Buffer, about 110 KB for an agent's turn. A young collection frees a
// dead Buffer, but young collections come only as fast as the engine allocates on the heap. A
// large body read as its top level (proxy/jsonSkeleton.ts) allocates little there, so at one
// request at a time its Buffers piled up until V8 ran a full collection to free them: 10-13 per
// 1,000 requests of 100 KiB, each marking the whole heap, where parsing the body had produced a
// young collection every 20 requests and almost no full ones.
//
// So the server reports each large body, and once those reported since the last nudge reach
// NUDGE_BYTES and no request is in flight, a young collection runs. With nothing in flight it
// finds almost nothing alive: a fraction of a millisecond, after the answer has gone. Under
// concurrent load a request is always in flight and nothing is forced: a young collection would
// copy every one of them (measured: 79-108 µs per request at c=32), and there the load's own
// allocation brings them. See docs/decisions/lean-25-skeleton.md.

/** Bodies' bytes since the last nudge that make the next idle moment run a young collection. */
export const NUDGE_BYTES = 2 * 1024 * 1024;

export class YoungNudge {
  private inFlight = 0;
  private bytes = 0;

  /** `minor`: a young collection (idleTrim.ts `minorGc`); null: this does nothing. */
  constructor(
    private readonly minor: (() => void) | null,
    private readonly threshold = NUDGE_BYTES,
  ) {}

  /** A request starts; `heldBytes`: its body's bytes held outside the heap that count here (0: none). */
  start(heldBytes: number): void {
    this.inFlight++;
    this.bytes += heldBytes;
  }

  /** A request is done (answered, failed or abandoned). */
  end(): void {
    this.inFlight--;
    if (this.inFlight > 0 || this.bytes < this.threshold || !this.minor) return;
    this.bytes = 0;
    this.minor();
  }
}
