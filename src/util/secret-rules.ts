/**
 * Secrets known by their shape alone, wherever they stand in a text: the token formats services
 * issue with a prefix or a structure of their own. Ported from gitleaks' rule set
 * (https://github.com/gitleaks/gitleaks, `config/gitleaks.toml` at b58d3f1, MIT licence,
 * Copyright (c) 2019 Zachary Rice): each rule keeps the id of the gitleaks rule(s) it comes from.
 *
 * gitleaks looks for secrets committed whole; these mask secrets quoted in a log line, where one may
 * be cut short or be a test key of another length, so a rule here keeps gitleaks' prefix and
 * alphabet but accepts a shorter or longer body (said on each rule as "loosened"). A rule matching
 * text that is no secret costs a word of the line; one missing a secret publishes it.
 */
export interface SecretRule {
  /** The gitleaks rule id(s) it is ported from. */
  readonly id: string;
  /** Global: every match is masked whole. */
  readonly pattern: RegExp;
}

export const TOKEN_RULES: readonly SecretRule[] = [
  // private-key: the block from BEGIN to its END, or to the line's end when the line was cut before it.
  {
    id: 'private-key',
    pattern: /-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----(?:[^-]|-(?!----END))*(?:-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----)?/gi,
  },
  // aws-access-token: as gitleaks has it.
  { id: 'aws-access-token', pattern: /\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b/g },
  // aws-amazon-bedrock-api-key-long-lived: loosened (gitleaks: 109 to 269 characters).
  { id: 'aws-amazon-bedrock-api-key-long-lived', pattern: /\bABSK[A-Za-z0-9+/]{40,}={0,2}/g },
  // github-pat, github-oauth, github-app-token, github-refresh-token: loosened (gitleaks: 36 characters).
  { id: 'github-pat github-oauth github-app-token github-refresh-token', pattern: /\bgh[pousr]_[A-Za-z0-9]{16,}/g },
  // github-fine-grained-pat: loosened (gitleaks: 82 characters).
  { id: 'github-fine-grained-pat', pattern: /\bgithub_pat_\w{20,}/g },
  // gitlab-pat, gitlab-pat-routable, gitlab-ptt, gitlab-deploy-token, gitlab-feed-token, gitlab-incoming-mail-token,
  // gitlab-kubernetes-agent-token, gitlab-oauth-app-secret, gitlab-runner-authentication-token, gitlab-scim-token,
  // gitlab-cicd-job-token, gitlab-feature-flag-client-token: their prefixes, loosened (gitleaks: 20 to 64 characters).
  { id: 'gitlab-*', pattern: /\bgl(?:pat|ptt|dt|ft|imt|agent|oas|rt|soat|cbt|ffct)-[\w.-]{16,}/g },
  // gitlab-rrt: loosened (gitleaks: 20 characters).
  { id: 'gitlab-rrt', pattern: /\bGR1348941[\w-]{16,}/g },
  // slack-bot-token, slack-user-token, slack-legacy-*, slack-config-access-token, slack-config-refresh-token: loosened.
  { id: 'slack-*-token', pattern: /\bxox[a-z](?:\.xox[a-z])?-[\w-]{8,}/g },
  // slack-app-token: loosened.
  { id: 'slack-app-token', pattern: /\bxapp-\d-[\w-]{8,}/gi },
  // slack-webhook-url: loosened (gitleaks: 43 to 56 characters of path).
  { id: 'slack-webhook-url', pattern: /(?:https?:\/\/)?hooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9+/]{8,}/g },
  // stripe-access-token: as gitleaks has it.
  { id: 'stripe-access-token', pattern: /\b(?:sk|rk)_(?:test|live|prod)_[A-Za-z0-9]{10,99}/g },
  // openai-api-key, anthropic-api-key, anthropic-admin-api-key: loosened (gitleaks asks for OpenAI's `T3BlbkFJ` inside, and exact lengths).
  { id: 'openai-api-key anthropic-api-key anthropic-admin-api-key', pattern: /\bsk-(?:proj-|svcacct-|admin-|ant-[a-z]+\d\d-)?[A-Za-z0-9_-]{20,}/g },
  // gcp-api-key: loosened (gitleaks: 35 characters).
  { id: 'gcp-api-key', pattern: /\bAIza[\w-]{30,}/g },
  // jwt: loosened (gitleaks asks for 17 characters in each part), its header's `ey` narrowed to `eyJ` (`{"`), so that
  // no English word is taken for one; a JWS or JWE of up to 5 parts, or a header alone.
  { id: 'jwt', pattern: /\beyJ[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_/+=-]*){0,4}/g },
  // jwt-base64: a JWT base64-encoded again, by its first characters; loosened (gitleaks lists the header fields).
  { id: 'jwt-base64', pattern: /\bZXlK[A-Za-z0-9/_+-]{20,}={0,2}/g },
  // sendgrid-api-token: loosened (gitleaks: 66 characters).
  { id: 'sendgrid-api-token', pattern: /\bSG\.[\w-]{16,}\.[\w-]{16,}/g },
  // npm-access-token: as gitleaks has it.
  { id: 'npm-access-token', pattern: /\bnpm_[A-Za-z0-9]{36}\b/g },
  // pypi-upload-token: as gitleaks has it.
  { id: 'pypi-upload-token', pattern: /\bpypi-AgEIcHlwaS5vcmc[\w-]{50,}/g },
  // huggingface-access-token, huggingface-organization-api-token: as gitleaks has them.
  { id: 'huggingface-access-token huggingface-organization-api-token', pattern: /\b(?:hf_[A-Za-z]{34}|api_org_[A-Za-z]{34})\b/g },
  // twilio-api-key: as gitleaks has it.
  { id: 'twilio-api-key', pattern: /\bSK[0-9a-fA-F]{32}\b/g },
  // shopify-access-token, shopify-custom-access-token, shopify-private-app-access-token, shopify-shared-secret: as gitleaks has them.
  { id: 'shopify-*', pattern: /\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b/g },
  // digitalocean-pat, digitalocean-access-token, digitalocean-refresh-token: as gitleaks has them.
  { id: 'digitalocean-*', pattern: /\bdo[opr]_v1_[a-f0-9]{64}\b/g },
  // mailchimp-api-key: without the word mailchimp before it, which gitleaks asks for.
  { id: 'mailchimp-api-key', pattern: /\b[a-f0-9]{32}-us\d{1,2}\b/g },
  // mailgun-private-api-token: without the word mailgun before it, which gitleaks asks for.
  { id: 'mailgun-private-api-token', pattern: /\bkey-[a-f0-9]{32}\b/g },
  // square-access-token: as gitleaks has it.
  { id: 'square-access-token', pattern: /\b(?:EAAA|sq0atp-)[\w-]{22,60}\b/g },
  // microsoft-teams-webhook: loosened (gitleaks spells out each GUID).
  { id: 'microsoft-teams-webhook', pattern: /https:\/\/[a-z0-9]+\.webhook\.office\.com\/webhookb2\/\S+/g },
];

/**
 * The words that say a name's value is secret (`WP_DB_PASSWORD`, `aws_secret_access_key`,
 * `AUTH_SALT`, `access_token`, `wordpress_logged_in_…`, `PHPSESSID`), anywhere in the name and in
 * any case. From gitleaks' generic-api-key (access, auth, credential, creds, key, password, secret,
 * token), with WordPress's own: its salts and nonces, its login and session cookies.
 */
export const SECRET_NAME_WORDS = /key|secret|token|pass|pwd|auth|cookie|sess(?:ion|id)|salt|nonce|credential|creds|logged_in|signature/i;
