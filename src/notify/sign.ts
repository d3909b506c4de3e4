import { createHmac } from 'node:crypto';

/**
 * `sha256=<hex>`: the HMAC-SHA256 of the exact bytes posted, keyed with the webhook's secret (the
 * form GitHub's webhooks use). A receiver computes the same over the body it received and compares
 * in constant time; the body's `sent_at` lets it refuse an old message sent again.
 */
export function signature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}
