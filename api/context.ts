import type { Clients } from '../stack/clients.js';
import type { Directory } from './directory.js';

/** What route plugins receive: the process's clients and the in-memory directory of accounts and keys. */
export interface ApiContext {
  readonly clients: Clients;
  readonly directory: Directory;
}

/** Options of every route plugin: `app.register(routes, { ctx })`. */
export interface RouteOptions {
  readonly ctx: ApiContext;
}
