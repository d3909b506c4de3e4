import type { CatalogShape } from './catalog.js';

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
export const PLUGIN_SHAPE: CatalogShape = {
  named(i) {
    const [name, title] = PLUGINS[i] ?? [`plugin-${String(i + 1).padStart(3, '0')}`, `Plugin ${i + 1}`];
    return { name, title };
  },
  majors: [1, 9],
  versionCount: [4, 8],
  patches: 5,
  olderVulnerable: 0.2,
  latestVulnerable: 0.15,
};

/** How many plugins the catalogue names: it holds these at least. */
export const NAMED_PLUGINS = PLUGINS.length;
