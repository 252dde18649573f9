// Typed reads of inbound JSON with the path in every error, so a malformed field is a 400 naming it.
import { invalid, untranslatable } from './codecError';
import { isObject } from './content';

export function arrayAt(v: unknown, path: string): any[] {
  if (!Array.isArray(v)) throw invalid(path, `${path} must be an array`);
  return v;
}

export function objectAt(v: unknown, path: string): Record<string, any> {
  if (!isObject(v)) throw invalid(path, `${path} must be an object`);
  return v;
}

export function stringAt(v: unknown, path: string): string {
  if (typeof v !== 'string') throw invalid(path, `${path} must be a string`);
  return v;
}

export function numberAt(v: unknown, path: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw invalid(path, `${path} must be a number`);
  return v;
}

export function optionalNumber(v: unknown, path: string): { value: number; path: string } | null {
  return v === undefined || v === null ? null : { value: numberAt(v, path), path };
}

export const present = (v: unknown): boolean => v !== undefined && v !== null;

/** Notes an accepted-but-not-sent field for the request log; bounded so a long history stays cheap. */
export function note(dropped: string[], path: string, why: string): void {
  if (dropped.length < 32) dropped.push(`${path}: ${why}`);
}

/** How a request reader treats the top-level fields it has no case for. */
export interface OtherFields {
  /** Transport hints and fields handled elsewhere: said nothing of. */
  silent: ReadonlySet<string>;
  /** Fields the target cannot honour, noted with why (unknown ones get a generic reason). */
  noted: Readonly<Record<string, string>>;
  /** Fields whose meaning would be lost: the request is refused naming them. */
  refused?: Readonly<Record<string, string>>;
}

/** A top-level field no case of the reader maps: silent, refused with a 400 naming it, or noted as dropped. */
export function otherField(dropped: string[], key: string, f: OtherFields): void {
  if (f.silent.has(key)) return;
  const refused = f.refused?.[key];
  if (refused) throw untranslatable(key, `${key} cannot be translated: ${refused}`);
  note(dropped, key, f.noted[key] ?? 'not part of the target protocol');
}
