import { BufferJSON, initAuthCreds, proto, type AuthenticationCreds, type AuthenticationState, type SignalDataSet, type SignalDataTypeMap, type SignalKeyStore } from '@whiskeysockets/baileys';
import type { Pool, PoolClient } from 'pg';
import { NumberLeases, type Lease } from './lease.js';

/** A write of a socket that has ended: a newer socket of the number claimed its auth state. */
export class StaleSocket extends Error {
  constructor(readonly instanceId: string) {
    super(`the auth state of ${instanceId} is written by a newer socket`);
  }
}

/** The auth state as one socket writes it: refused (StaleSocket) once a newer socket claimed it. */
export interface SocketAuth {
  readonly generation: number;
  readonly keys: SignalKeyStore;
  saveCreds(): Promise<void>;
}

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
  saveCreds(): Promise<void> {
    return this.writeCreds(undefined);
  }

  readonly keys: SignalKeyStore = this.keysOf(undefined);

  /**
   * Makes the caller (a new socket) the only writer of the number's auth state: the write of an
   * older socket still in flight holds the writer row (`FOR SHARE`), so this waits for it to end,
   * and every write of an older socket after this is refused. An ended socket's late write could
   * otherwise land after the new socket read the state, and take it back in time.
   */
  async claim(): Promise<SocketAuth> {
    let generation = 0;
    await this.transaction(async (client) => {
      const { rows } = await client.query<{ generation: string }>(
        `INSERT INTO baileys.auth_writers AS w (instance_id, generation) VALUES ($1, 1)
         ON CONFLICT (instance_id) DO UPDATE SET generation = w.generation + 1 RETURNING generation`,
        [this.instanceId],
      );
      generation = Number(rows[0]!.generation);
    });
    return { generation, keys: this.keysOf(generation), saveCreds: () => this.writeCreds(generation) };
  }

  private async writeCreds(writer: number | undefined): Promise<void> {
    await this.transaction(
      (client) =>
        client.query(
          `INSERT INTO baileys.creds (instance_id, creds, updated_at) VALUES ($1, $2, now())
           ON CONFLICT (instance_id) DO UPDATE SET creds = EXCLUDED.creds, updated_at = now()`,
          [this.instanceId, serialise(this.creds)],
        ),
      writer,
    );
  }

  /** The key store; with a writer generation, its writes are refused once a newer socket claimed the state. */
  private keysOf(writer: number | undefined): SignalKeyStore {
    return {
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
        }, writer);
      },
      clear: async () => {
        await this.transaction((client) => client.query(`DELETE FROM baileys.keys WHERE instance_id = $1`, [this.instanceId]), writer);
      },
    };
  }

  /** A number logged out for good: its creds and keys go. */
  async remove(): Promise<void> {
    await this.transaction(async (client) => {
      await client.query(`DELETE FROM baileys.keys WHERE instance_id = $1`, [this.instanceId]);
      await client.query(`DELETE FROM baileys.creds WHERE instance_id = $1`, [this.instanceId]);
    });
  }

  /**
   * One transaction, refused whole once the lease (if any) is no longer this worker's, or once a
   * socket newer than `writer` (if given) claimed the state.
   */
  private async transaction(work: (client: PoolClient) => Promise<unknown>, writer?: number): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      if (this.lease) await NumberLeases.fence(client, this.lease);
      if (writer !== undefined) {
        const { rowCount } = await client.query(`SELECT 1 FROM baileys.auth_writers WHERE instance_id = $1 AND generation = $2 FOR SHARE`, [this.instanceId, writer]);
        if (rowCount !== 1) throw new StaleSocket(this.instanceId);
      }
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
