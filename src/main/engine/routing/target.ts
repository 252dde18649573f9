// A routing target: one connection asked for one upstream model.
import type { ConnectionRecord } from '../store/connectionsRepo';

export interface Target {
  conn: ConnectionRecord;
  /** Model id sent upstream (prefix stripped). */
  model: string;
  /** Model name as the client asked for it. */
  requestedModel: string;
}
