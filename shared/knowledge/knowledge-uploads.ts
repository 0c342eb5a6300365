// The port of uploaded documents' bytes (container `knowledge-uploads`, partition documentId, a week's TTL): the
// upload writes them before it queues the document, the ingestion worker reads them, and they are removed once the
// document is indexed, has failed or is deleted. Adapter: adapters/cosmos-knowledge-uploads.ts (parts of
// UPLOAD_PART_BYTES).
export interface KnowledgeUploads {
  /** Stores the content (writing it again changes nothing); returns how many parts hold it. */
  put(documentId: string, content: Uint8Array): Promise<number>;
  /** The content from its `parts` parts; undefined when any part is gone (expired or removed). */
  get(documentId: string, parts: number): Promise<Uint8Array | undefined>;
  /** Removes the parts (those already gone are skipped). */
  remove(documentId: string, parts: number): Promise<void>;
}
