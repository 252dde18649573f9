// combos and model_mappings: named routing pools and the model-id patterns that route to them.
// The combo registry keeps both in memory and writes through here.
import type { ComboOptions, ComboStrategy, ComboTarget } from '../../../shared/model';
import type { Db } from './db';

export interface ComboRecord {
  id: string;
  name: string;
  strategy: ComboStrategy;
  targets: ComboTarget[];
  options: ComboOptions;
  createdAt: number;
  updatedAt: number;
}

export interface ModelMappingRecord {
  id: string;
  pattern: string;
  comboId: string;
  createdAt: number;
  updatedAt: number;
}

interface ComboRow {
  id: string;
  name: string;
  strategy: string;
  targets: string;
  options: string;
  created_at: number;
  updated_at: number;
}

interface MappingRow {
  id: string;
  pattern: string;
  combo_id: string;
  created_at: number;
  updated_at: number;
}

const parse = <T>(s: string, fallback: T): T => {
  try {
    return JSON.parse(s) as T;
  } catch {
    return fallback;
  }
};

const comboFromRow = (r: ComboRow): ComboRecord => ({
  id: r.id,
  name: r.name,
  strategy: r.strategy as ComboStrategy,
  targets: parse<ComboTarget[]>(r.targets, []),
  options: parse<ComboOptions>(r.options, {}),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const mappingFromRow = (r: MappingRow): ModelMappingRecord => ({
  id: r.id,
  pattern: r.pattern,
  comboId: r.combo_id,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export class CombosRepo {
  private readonly stmts;

  constructor(private readonly db: Db) {
    this.stmts = {
      combos: db.prepare('SELECT * FROM combos ORDER BY created_at, rowid'),
      mappings: db.prepare('SELECT * FROM model_mappings ORDER BY created_at, rowid'),
      upsertCombo: db.prepare(
        `INSERT INTO combos (id, name, strategy, targets, options, created_at, updated_at)
         VALUES (@id, @name, @strategy, @targets, @options, @created_at, @updated_at)
         ON CONFLICT(id) DO UPDATE SET name = excluded.name, strategy = excluded.strategy,
           targets = excluded.targets, options = excluded.options, updated_at = excluded.updated_at`,
      ),
      deleteCombo: db.prepare('DELETE FROM combos WHERE id = ?'),
      mappingsOf: db.prepare('SELECT COUNT(*) AS n FROM model_mappings WHERE combo_id = ?'),
      upsertMapping: db.prepare(
        `INSERT INTO model_mappings (id, pattern, combo_id, created_at, updated_at)
         VALUES (@id, @pattern, @combo_id, @created_at, @updated_at)
         ON CONFLICT(id) DO UPDATE SET pattern = excluded.pattern, combo_id = excluded.combo_id, updated_at = excluded.updated_at`,
      ),
      deleteMapping: db.prepare('DELETE FROM model_mappings WHERE id = ?'),
    };
  }

  combos(): ComboRecord[] {
    return (this.stmts.combos.all() as ComboRow[]).map(comboFromRow);
  }

  mappings(): ModelMappingRecord[] {
    return (this.stmts.mappings.all() as MappingRow[]).map(mappingFromRow);
  }

  saveCombo(c: ComboRecord): void {
    this.stmts.upsertCombo.run({
      id: c.id,
      name: c.name,
      strategy: c.strategy,
      targets: JSON.stringify(c.targets),
      options: JSON.stringify(c.options),
      created_at: c.createdAt,
      updated_at: c.updatedAt,
    });
  }

  /** Deletes a combo and (by the foreign key) its mappings; returns how many mappings went with it. */
  deleteCombo(id: string): number {
    return this.db.transaction(() => {
      const n = (this.stmts.mappingsOf.get(id) as { n: number }).n;
      this.stmts.deleteCombo.run(id);
      return n;
    })();
  }

  saveMapping(m: ModelMappingRecord): void {
    this.stmts.upsertMapping.run({
      id: m.id,
      pattern: m.pattern,
      combo_id: m.comboId,
      created_at: m.createdAt,
      updated_at: m.updatedAt,
    });
  }

  deleteMapping(id: string): boolean {
    return this.stmts.deleteMapping.run(id).changes > 0;
  }
}
