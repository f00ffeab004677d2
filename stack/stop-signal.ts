export interface StopSignal {
  /** True once SIGINT or SIGTERM came. */
  readonly asked: boolean;
  /** Resolves with the first SIGINT or SIGTERM. */
  readonly received: Promise<NodeJS.Signals>;
}

/**
 * Listens for the signals that ask this process to stop, from before its roles start: a signal
 * that comes while they start (a deploy that replaces a process just started) lets them finish
 * starting and then stop cleanly, leaving their consumer groups, instead of ending the process
 * as if it were killed, when the groups it had joined waited a whole session for it. A signal
 * that comes while the clients still connect (a broker not reachable) ends the process at once,
 * as nothing is joined yet; a second signal always does.
 */
export function listenForStop(): StopSignal {
  let asked = false;
  const received = new Promise<NodeJS.Signals>((resolve) => {
    const first = (signal: NodeJS.Signals) => {
      asked = true;
      process.removeListener('SIGINT', first).removeListener('SIGTERM', first);
      process.once('SIGINT', () => process.exit(1)).once('SIGTERM', () => process.exit(1));
      resolve(signal);
    };
    process.on('SIGINT', first).on('SIGTERM', first);
  });
  return {
    get asked() {
      return asked;
    },
    received,
  };
}
