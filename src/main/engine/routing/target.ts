// A routing target: one connection asked for one upstream model.
import type { ApiShape } from '../streams/shape';
import type { ConnectionRecord } from '../store/connectionsRepo';

/** The combo entry a target expands (set when a combo routed the request). */
export interface TargetCombo {
  id: string;
  name: string;
  /** Index of the target in the combo's list. */
  index: number;
  /** Stable identity of the combo target (provider/model#connection). */
  key: string;
}

export interface Target {
  conn: ConnectionRecord;
  /** Model id sent upstream (prefix stripped). */
  model: string;
  /** Model name as the client asked for it. */
  requestedModel: string;
  /** Present when a combo routed the request. */
  combo?: TargetCombo;
  /** Time allowed for the response headers; wins over the connection's timeout (combo targetTimeoutMs). */
  headersTimeoutMs?: number;
  /**
   * The API shape this target is called in (upstreamShape.ts). Resolution sets it; a target built
   * without it (e.g. by a combo) gets its connection's shape for the inbound request at attempt time.
   * A shape other than the inbound one means the attempt is translated (proxy/translation.ts).
   */
  upstream?: ApiShape;
  /** Reached through translation: at equal priority, native targets are tried first. */
  translated?: boolean;
}
