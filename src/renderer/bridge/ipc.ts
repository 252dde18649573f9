// The Bridge over Electron IPC: window.api (built by the preload from the contract) with each
// envelope unwrapped into a value or a BridgeError.
import { unwrap, type Envelope, type PreloadApi } from '../../shared/bridge';
import { METHOD_NAMES, type Bridge } from '../../shared/contract';

export function createIpcBridge(api: PreloadApi): Bridge {
  const out: Record<string, unknown> = {};
  for (const name of METHOD_NAMES) {
    out[name] = async (input?: unknown) => unwrap<unknown>(await (api[name] as (i?: unknown) => Promise<Envelope>)(input));
  }
  out.on = api.on;
  return out as unknown as Bridge;
}
