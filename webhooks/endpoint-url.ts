import { LOOPBACK_HOSTS } from '../lib/config/env.js';

/**
 * Where an endpoint may point: an absolute https URL, without credentials or a fragment; plain
 * http only to this machine (a loopback host) and only where WEBHOOK_ALLOW_HTTP_LOOPBACK allows it.
 * The event and its signature travel in the clear over http, so nowhere else.
 * Answers why a URL is refused, or undefined when it is allowed.
 */
export function endpointUrlRefusal(text: string, options: { allowHttpLoopback: boolean }): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.username || url.password) return 'must not carry credentials (user:password@)';
  if (url.hash) return 'must not have a fragment (#…)';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol !== 'http:') return 'must be https';
  if (!LOOPBACK_HOSTS.includes(url.hostname)) return 'must be https (http only to a loopback host)';
  return options.allowHttpLoopback
    ? undefined
    : 'must be https (http to a loopback host needs WEBHOOK_ALLOW_HTTP_LOOPBACK)';
}
