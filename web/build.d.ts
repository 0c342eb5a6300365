// Types of web/build.js (plain JavaScript, so that `npm start` runs it before anything is built).
export declare function hasWebClient(root: string): boolean;
export declare function webBuildStaleness(root: string): string | undefined;
export declare function buildWebClient(
  root: string,
  options?: { outDir?: string; base?: string },
): Promise<void>;
export declare function ensureWebClient(root: string): Promise<{ built: boolean; reason?: string }>;
