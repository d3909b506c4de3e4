export type Globs = string | string[];

export interface Selector {
  site?: Globs;
  environment?: Globs;
  theme?: Globs;
  ids?: string[];
  exclude?: Selector;
}

export type TargetRef = 'all' | string | Selector;

export interface Task {
  index: number;
  name: string;
  action: string;
  target?: TargetRef;
  with: any;
  allow_empty: boolean;
  max_failures?: number | string;
}

export interface PlaybookSettings {
  rate_limit?: string;
  concurrency?: number;
  max_failures?: number | string;
  report_dir?: string;
}

export interface Playbook {
  /** The path as the user gave it. */
  file: string;
  name: string;
  company?: string;
  settings: PlaybookSettings;
  targets: Record<string, Selector>;
  tasks: Task[];
  /** Line and column of a field, by dotted path (`tasks.1.with.php_version`). */
  locate(path: string): { line: number; column: number };
}
