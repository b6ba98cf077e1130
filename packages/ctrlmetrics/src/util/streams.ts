/** Small helpers for Node streams shared by the servers. */

/** Something that emits `drain` when it can take more data and `close` when it is gone (a response, a socket). */
export interface DrainableStream {
  on(event: 'drain' | 'close', listener: () => void): unknown;
  off(event: 'drain' | 'close', listener: () => void): unknown;
}

/** Resolves once `stream` can take more data, or is gone (so that a writer waiting on a dead client never hangs). */
export function drainOrClose(stream: DrainableStream): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      stream.off('drain', done);
      stream.off('close', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('close', done);
  });
}
