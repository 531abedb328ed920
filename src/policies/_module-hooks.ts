import type { MessagePort } from 'node:worker_threads';

/**
 * Module customization hooks (`module.register`) for the thread that
 * describes a policy module (module-host.ts): every module URL its import
 * resolves to is posted to the port it was given, so the main thread learns
 * which files the module is made of (its own and those it imports) and keys
 * the replay cache on all of them. Resolution itself is left as it is.
 */

let port: MessagePort | undefined;

/** Receives the port to post to (the `data` of `module.register`). */
export function initialize(data: { port: MessagePort }): void {
  port = data.port;
}

interface Resolved {
  url: string;
}

/** Resolves as the next hook does, and posts the URL it resolved to. */
export async function resolve(specifier: string, context: unknown, next: (specifier: string, context: unknown) => Promise<Resolved>): Promise<Resolved> {
  const resolved = await next(specifier, context);
  port?.postMessage(resolved.url);
  return resolved;
}
