/**
 * Shops: sites whose customers keep ordering while the fleet is maintained. An order is data in the
 * environment's database, so a backup keeps the orders made before it (backup-state.ts) and a restore
 * loses those made since, as the vendor's docs warn for dynamic sites (real-service-notes.md, "Backups
 * and restores"); putting an item back by its own files (item-install.ts) keeps them.
 *
 * Each page of a shop served by WordPress itself (answered 2xx, not from the page cache) stands for a
 * customer's checkout: it places `perVisit` orders on the environment. A broken shop takes none.
 */
export class Shops {
  private readonly perVisit = new Map<string, number>();

  /** From now on the site at this domain is a shop whose every page served places `perVisit` orders. */
  open(domain: string, perVisit: number): void {
    this.perVisit.set(domain.toLowerCase(), perVisit);
  }

  /** A page of `domain` was served with `status`: the orders it placed on `env`. */
  visit(domain: string, env: { orders?: number } | undefined, status: number, cached: boolean): void {
    const per = this.perVisit.get(domain.toLowerCase());
    if (!per || !env || cached || status < 200 || status >= 300) return;
    env.orders = (env.orders ?? 0) + per;
  }
}
