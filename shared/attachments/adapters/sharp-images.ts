// Re-encodes an image with sharp (libvips): the EXIF orientation applied, scaled to the longest edge the model
// uses, and written anew without its metadata (EXIF, GPS, XMP, comments). A GIF keeps its first frame, as PNG.
import sharp from 'sharp';
import type { ImageEncoder } from '../store-attachment.js';

/** libvips' own caches would hold decoded images between requests; the app keeps no image after it is stored. */
sharp.cache(false);

export const sharpImages: ImageEncoder = {
  async reencode(bytes, { mediaType, maxEdge, maxPixels }) {
    // limitInputPixels is libvips' own bound, behind the header check the caller made before decoding.
    const image = sharp(bytes, { limitInputPixels: maxPixels, failOn: 'error', animated: false })
      .rotate()
      .resize({ width: maxEdge, height: maxEdge, fit: 'inside', withoutEnlargement: true });
    const format = mediaType === 'image/jpeg' ? 'jpeg' : mediaType === 'image/webp' ? 'webp' : 'png';
    const { data, info } = await image.toFormat(format).toBuffer({ resolveWithObject: true });
    return { bytes: data, mediaType: `image/${format}`, width: info.width, height: info.height };
  },
};
