// The maxQueueDepth admission rule as a pure function (SPEC R-RQ-20..22): checked before the
// request joins the queue, so a full queue answers at once and nothing reaches the upstream.

export type QueueAdmission = { admit: true } | { admit: false; waiting: number };

/** `waiting` = requests of this connection not yet dispatched; `maxQueueDepth` 0 = no cap. */
export function checkQueueAdmission(waiting: number, maxQueueDepth: number): QueueAdmission {
  if (maxQueueDepth > 0 && waiting >= maxQueueDepth) return { admit: false, waiting };
  return { admit: true };
}
