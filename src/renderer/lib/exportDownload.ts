// The Overview's "Export usage" and "Export request log": a GET of the headless shell's export
// route for a time range and a format, authenticated like every other call (the session cookie in
// a browser, or a bearer token when one is given), saved as a file through a Blob download. The
// address, the file name and the words for a failed export are pure and unit-tested.

export type ExportKind = 'usage' | 'logs';
export type ExportFormat = 'csv' | 'json';

export const EXPORT_WORDS: Record<ExportKind, string> = { usage: 'usage', logs: 'the request log' };

/** `/api/export/usage?from=…&to=…&format=csv` (times in ms since the epoch, engine time). */
export function exportPath(kind: ExportKind, range: { from: number; to: number }, format: ExportFormat): string {
  const q = new URLSearchParams({ from: String(Math.floor(range.from)), to: String(Math.ceil(range.to)), format });
  return `/api/export/${kind}?${q.toString()}`;
}

const stamp = (ms: number) => new Date(ms).toISOString().slice(0, 16).replace(/[-:]/g, '').replace('T', '-');

/** The engine's file name (Content-Disposition) when it gives one, else `switchyard-usage-20250101-1200-20250102-1200.csv`. */
export function exportFileName(kind: ExportKind, range: { from: number; to: number }, format: ExportFormat, disposition?: string | null): string {
  const m = disposition ? /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(disposition) : null;
  const given = m?.[1] ? decodeURIComponent(m[1]).replace(/[/\\]/g, '_') : null;
  return given || `switchyard-${kind === 'logs' ? 'request-log' : 'usage'}-${stamp(range.from)}-${stamp(range.to)}.${format}`;
}

/** Why an export failed, in words for the button's error. */
export function exportFailure(kind: ExportKind, status: number | null, engineMessage?: string | null): string {
  const what = `Could not export ${EXPORT_WORDS[kind]}`;
  if (status === null) return `${what}: Switchyard is not reachable; is it still running?`;
  if (status === 404 || status === 405) return `${what}: this Switchyard does not offer that export. Update it, or read the figures on this page.`;
  if (status === 401) return `${what}: the management token was not accepted.`;
  return `${what}: ${engineMessage || `the engine answered ${status}`}`;
}

export class ExportError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
  ) {
    super(message);
  }
}

export interface ExportFile {
  blob: Blob;
  name: string;
}

/** The two export methods of the contract, as both shells' Bridge offers them. */
export interface ExportBridge {
  exportUsage(input: { from: number; to: number; format: ExportFormat }): Promise<{ filename: string; contentType: string; body: string }>;
  exportLogs(input: { from: number; to: number; format: ExportFormat }): Promise<{ filename: string; contentType: string; body: string }>;
}

/**
 * One export through the Bridge (IPC on the desktop, HTTP in a browser): the same contract method
 * in both shells. Throws an ExportError with plain words when it fails.
 */
export async function exportThroughBridge(bridge: ExportBridge, kind: ExportKind, range: { from: number; to: number }, format: ExportFormat): Promise<ExportFile> {
  const input = { from: Math.floor(range.from), to: Math.ceil(range.to), format };
  try {
    const f = kind === 'usage' ? await bridge.exportUsage(input) : await bridge.exportLogs(input);
    return { blob: new Blob([f.body], { type: f.contentType }), name: f.filename || exportFileName(kind, range, format) };
  } catch (err) {
    const message = err instanceof Error ? err.message : null;
    throw new ExportError(exportFailure(kind, 0, message), null);
  }
}

/** Fetches one export; throws an ExportError with plain words when it fails. */
export async function fetchExport(
  kind: ExportKind,
  range: { from: number; to: number },
  format: ExportFormat,
  o: { baseUrl?: string; token?: string | null; fetch?: typeof fetch } = {},
): Promise<ExportFile> {
  const f = o.fetch ?? fetch.bind(globalThis);
  let res: Response;
  try {
    res = await f(`${(o.baseUrl ?? '').replace(/\/+$/, '')}${exportPath(kind, range, format)}`, {
      method: 'GET',
      credentials: 'same-origin',
      headers: { accept: format === 'csv' ? 'text/csv' : 'application/json', ...(o.token ? { authorization: `Bearer ${o.token}` } : {}) },
    });
  } catch {
    throw new ExportError(exportFailure(kind, null), null);
  }
  if (!res.ok) {
    let message: string | null = null;
    try {
      message = ((await res.json()) as { error?: { message?: string } }).error?.message ?? null;
    } catch {
      message = null;
    }
    throw new ExportError(exportFailure(kind, res.status, message), res.status);
  }
  return { blob: await res.blob(), name: exportFileName(kind, range, format, res.headers.get('content-disposition')) };
}

/** Saves a Blob as a file through a temporary link (the browser's download). */
export function saveBlob(file: ExportFile, doc: Document = document): void {
  const url = URL.createObjectURL(file.blob);
  const a = doc.createElement('a');
  a.href = url;
  a.download = file.name;
  a.style.display = 'none';
  doc.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
