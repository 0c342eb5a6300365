// The port of uploaded documents' bytes (container `knowledge-uploads`, partition documentId, a week's TTL):
// the upload writes them before it queues the document, the ingestion worker reads them, and they are removed
// once the document is indexed, has failed or is deleted.
export interface KnowledgeUploads {
  /** Stores the attempt's content (writing it again changes nothing); returns how many parts hold it. */
  put(documentId: string, attempt: number, content: Uint8Array): Promise<number>;
  /** The attempt's content from its `parts` parts; undefined when any part is gone (expired or removed). */
  get(documentId: string, attempt: number, parts: number): Promise<Uint8Array | undefined>;
  /** Removes the attempt's parts (those already gone are skipped); another attempt's are left alone. */
  remove(documentId: string, attempt: number, parts: number): Promise<void>;
}
