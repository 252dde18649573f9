// Typed reads of inbound JSON with the path in every error, so a malformed field is a 400 naming it.
import { invalid } from './codecError';
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
