import type { CatalogItem } from './fleet.js';
import type { Random } from './random.js';

/** Plugins agencies' sites run, with their titles as the plugin directory shows them. */
const PLUGINS: readonly (readonly [slug: string, title: string])[] = [
  ['akismet', 'Akismet Anti-spam: Spam Protection'],
  ['wordpress-seo', 'Yoast SEO'],
  ['woocommerce', 'WooCommerce'],
  ['contact-form-7', 'Contact Form 7'],
  ['elementor', 'Elementor Website Builder'],
  ['wpforms-lite', 'WPForms Lite'],
  ['jetpack', 'Jetpack'],
  ['classic-editor', 'Classic Editor'],
  ['really-simple-ssl', 'Really Simple Security'],
  ['wordfence', 'Wordfence Security'],
  ['updraftplus', 'UpdraftPlus: WP Backup & Migration Plugin'],
  ['litespeed-cache', 'LiteSpeed Cache'],
  ['all-in-one-seo-pack', 'All in One SEO'],
  ['wp-mail-smtp', 'WP Mail SMTP'],
  ['google-site-kit', 'Site Kit by Google'],
  ['duplicate-post', 'Yoast Duplicate Post'],
  ['redirection', 'Redirection'],
  ['advanced-custom-fields', 'Advanced Custom Fields'],
  ['wp-super-cache', 'WP Super Cache'],
  ['w3-total-cache', 'W3 Total Cache'],
  ['mailchimp-for-wp', 'MC4WP: Mailchimp for WordPress'],
  ['really-simple-captcha', 'Really Simple CAPTCHA'],
  ['limit-login-attempts-reloaded', 'Limit Login Attempts Reloaded'],
  ['regenerate-thumbnails', 'Regenerate Thumbnails'],
  ['tablepress', 'TablePress'],
  ['wp-optimize', 'WP-Optimize'],
  ['smush', 'Smush Image Optimization'],
  ['ewww-image-optimizer', 'EWWW Image Optimizer'],
  ['all-in-one-wp-migration', 'All-in-One WP Migration'],
  ['duplicator', 'Duplicator'],
  ['svg-support', 'SVG Support'],
  ['cookie-law-info', 'CookieYes GDPR Cookie Consent'],
  ['complianz-gdpr', 'Complianz GDPR/CCPA Cookie Consent'],
  ['wp-file-manager', 'File Manager'],
  ['insert-headers-and-footers', 'WPCode'],
  ['loco-translate', 'Loco Translate'],
  ['polylang', 'Polylang'],
  ['woocommerce-payments', 'WooPayments'],
  ['woocommerce-gateway-stripe', 'WooCommerce Stripe Payment Gateway'],
  ['mailpoet', 'MailPoet'],
  ['header-footer-elementor', 'Ultimate Addons for Elementor'],
  ['essential-addons-for-elementor-lite', 'Essential Addons for Elementor'],
  ['breadcrumb-navxt', 'Breadcrumb NavXT'],
  ['user-role-editor', 'User Role Editor'],
  ['hello-dolly', 'Hello Dolly'],
];

/** The plugin catalogue: the named plugins, and numbered ones beyond them when environments install more. */
export function makePluginCatalog(rng: Random, atLeast: number): Map<string, CatalogItem> {
  const catalog = new Map<string, CatalogItem>();
  const count = Math.max(PLUGINS.length, atLeast);
  for (let i = 0; i < count; i++) {
    const [name, title] = PLUGINS[i] ?? [`plugin-${String(i + 1).padStart(3, '0')}`, `Plugin ${i + 1}`];
    const major = rng.int(1, 9);
    const versions = Array.from({ length: rng.int(4, 8) }, (_, minor) => `${major}.${minor}.${rng.int(0, 5)}`);
    const vulnerable = new Set<string>();
    for (const v of versions.slice(0, -1)) if (rng.chance(0.2)) vulnerable.add(v);
    // A vulnerable latest version: the update a careful policy holds back.
    if (rng.chance(0.15)) vulnerable.add(versions.at(-1)!);
    catalog.set(name, { name, title, versions, vulnerable });
  }
  return catalog;
}
