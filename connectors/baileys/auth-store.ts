import { BufferJSON, initAuthCreds, proto, type AuthenticationCreds, type AuthenticationState, type SignalDataSet, type SignalDataTypeMap, type SignalKeyStore } from '@whiskeysockets/baileys';
import type { Pool, PoolClient } from 'pg';
import { NumberLeases, type Lease } from './lease.js';

export const authStoreDdl = [
  `CREATE SCHEMA IF NOT EXISTS baileys`,
  `CREATE TABLE IF NOT EXISTS baileys.creds (
    instance_id text PRIMARY KEY,
    creds text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE TABLE IF NOT EXISTS baileys.keys (
    instance_id text NOT NULL,
    type text NOT NULL,
    id text NOT NULL,
    value text NOT NULL,
    PRIMARY KEY (instance_id, type, id)
  )`,
];

const serialise = (value: unknown): string => JSON.stringify(value, BufferJSON.replacer);
const revive = <T>(text: string): T => JSON.parse(text, BufferJSON.reviver) as T;

/**
 * One number's Baileys auth state in Postgres (issue 12): the creds in one row, every signal key
 * in a row of its own, serialised with Baileys' `BufferJSON`. Each `keys.set` and each save of the
 * creds is one transaction: it commits whole or not at all, and a failure rejects, so the session
 * that asked stops instead of going on with a key the database does not have (a lost key write
 * means messages stop reaching recipients). Nothing is written to disk. The socket reads it through
 * Baileys' cacheable store (`makeCacheableSignalKeyStore`), which the session wraps around `keys`.
 */
export class PostgresAuthStore {
  private constructor(
    private readonly pool: Pool,
    private readonly instanceId: string,
    readonly creds: AuthenticationCreds,
    private readonly lease: Pick<Lease, 'instanceId' | 'generation'> | undefined,
  ) {}

  /**
   * The number's state: its stored creds, or new ones (saved at once) for a number never paired.
   * With a lease, every write is refused (LeaseLost) once the lease has moved to another worker.
   */
  static async open(pool: Pool, instanceId: string, lease?: Pick<Lease, 'instanceId' | 'generation'>): Promise<PostgresAuthStore> {
    const { rows } = await pool.query<{ creds: string }>(`SELECT creds FROM baileys.creds WHERE instance_id = $1`, [instanceId]);
    const stored = rows[0];
    const store = new PostgresAuthStore(pool, instanceId, stored ? revive<AuthenticationCreds>(stored.creds) : initAuthCreds(), lease);
    if (!stored) await store.saveCreds();
    return store;
  }

  /** What `makeWASocket({ auth })` takes (before the cacheable wrapper). */
  get state(): AuthenticationState {
    return { creds: this.creds, keys: this.keys };
  }

  /** On every `creds.update`: Baileys mutates `creds` in place; the whole object is written. */
  async saveCreds(): Promise<void> {
    await this.transaction((client) =>
      client.query(
        `INSERT INTO baileys.creds (instance_id, creds, updated_at) VALUES ($1, $2, now())
         ON CONFLICT (instance_id) DO UPDATE SET creds = EXCLUDED.creds, updated_at = now()`,
        [this.instanceId, serialise(this.creds)],
      ),
    );
  }

  readonly keys: SignalKeyStore = {
    get: async <T extends keyof SignalDataTypeMap>(type: T, ids: string[]) => {
      const found: { [id: string]: SignalDataTypeMap[T] } = {};
      if (ids.length === 0) return found;
      const { rows } = await this.pool.query<{ id: string; value: string }>(
        `SELECT id, value FROM baileys.keys WHERE instance_id = $1 AND type = $2 AND id = ANY($3)`,
        [this.instanceId, type, ids],
      );
      for (const row of rows) {
        const value = revive<SignalDataTypeMap[T]>(row.value);
        // As Baileys' own stores do: this type is read back as its protobuf class.
        found[row.id] = (type === 'app-state-sync-key' ? proto.Message.AppStateSyncKeyData.fromObject(value as object) : value) as SignalDataTypeMap[T];
      }
      return found;
    },
    set: async (data: SignalDataSet) => {
      const written = { types: [] as string[], ids: [] as string[], values: [] as string[] };
      const removed = { types: [] as string[], ids: [] as string[] };
      for (const [type, entries] of Object.entries(data)) {
        for (const [id, value] of Object.entries(entries ?? {})) {
          if (value === null || value === undefined) {
            removed.types.push(type);
            removed.ids.push(id);
          } else {
            written.types.push(type);
            written.ids.push(id);
            written.values.push(serialise(value));
          }
        }
      }
      await this.transaction(async (client) => {
        if (removed.ids.length > 0) {
          await client.query(
            `DELETE FROM baileys.keys k USING unnest($2::text[], $3::text[]) AS r(type, id) WHERE k.instance_id = $1 AND k.type = r.type AND k.id = r.id`,
            [this.instanceId, removed.types, removed.ids],
          );
        }
        if (written.ids.length > 0) {
          await client.query(
            `INSERT INTO baileys.keys (instance_id, type, id, value) SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[])
             ON CONFLICT (instance_id, type, id) DO UPDATE SET value = EXCLUDED.value`,
            [this.instanceId, written.types, written.ids, written.values],
          );
        }
      });
    },
    clear: async () => {
      await this.transaction((client) => client.query(`DELETE FROM baileys.keys WHERE instance_id = $1`, [this.instanceId]));
    },
  };

  /** A number logged out for good: its creds and keys go. */
  async remove(): Promise<void> {
    await this.transaction(async (client) => {
      await client.query(`DELETE FROM baileys.keys WHERE instance_id = $1`, [this.instanceId]);
      await client.query(`DELETE FROM baileys.creds WHERE instance_id = $1`, [this.instanceId]);
    });
  }

  /** One transaction, refused whole once the lease (if any) is no longer this worker's. */
  private async transaction(work: (client: PoolClient) => Promise<unknown>): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      if (this.lease) await NumberLeases.fence(client, this.lease);
      await work(client);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }
}
