import Foundation

/// MIME types for common file extensions. Linux has no UTType, so a table stands in for it;
/// unknown extensions are `application/octet-stream`.
enum MIMEType {
    static let octetStream = "application/octet-stream"

    /// The MIME type for a path extension (case-insensitive, without the dot).
    static func forPathExtension(_ pathExtension: String) -> String {
        table[pathExtension.lowercased()] ?? octetStream
    }

    private static let table: [String: String] = [
        // Text
        "txt": "text/plain", "text": "text/plain", "log": "text/plain",
        "html": "text/html", "htm": "text/html", "css": "text/css", "csv": "text/csv",
        "md": "text/markdown", "markdown": "text/markdown", "xml": "application/xml",
        "ics": "text/calendar", "vcf": "text/vcard", "tsv": "text/tab-separated-values",
        // Data and code
        "json": "application/json", "geojson": "application/geo+json", "jsonld": "application/ld+json",
        "js": "text/javascript", "mjs": "text/javascript", "yaml": "application/yaml", "yml": "application/yaml",
        "pdf": "application/pdf", "rtf": "application/rtf", "wasm": "application/wasm",
        "plist": "application/x-plist",
        // Archives
        "zip": "application/zip", "gz": "application/gzip", "tgz": "application/gzip",
        "tar": "application/x-tar", "bz2": "application/x-bzip2", "xz": "application/x-xz",
        "7z": "application/x-7z-compressed", "rar": "application/vnd.rar",
        // Images
        "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif",
        "webp": "image/webp", "heic": "image/heic", "heif": "image/heif", "bmp": "image/bmp",
        "tif": "image/tiff", "tiff": "image/tiff", "svg": "image/svg+xml", "ico": "image/vnd.microsoft.icon",
        "avif": "image/avif",
        // Audio and video
        "mp3": "audio/mpeg", "m4a": "audio/mp4", "aac": "audio/aac", "wav": "audio/wav",
        "ogg": "audio/ogg", "oga": "audio/ogg", "flac": "audio/flac", "opus": "audio/opus",
        "mp4": "video/mp4", "m4v": "video/mp4", "mov": "video/quicktime", "webm": "video/webm",
        "avi": "video/x-msvideo", "mkv": "video/x-matroska", "ogv": "video/ogg",
        // Office documents
        "doc": "application/msword",
        "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xls": "application/vnd.ms-excel",
        "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "ppt": "application/vnd.ms-powerpoint",
        "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "odt": "application/vnd.oasis.opendocument.text",
        "ods": "application/vnd.oasis.opendocument.spreadsheet",
        "epub": "application/epub+zip",
        // Fonts
        "woff": "font/woff", "woff2": "font/woff2", "ttf": "font/ttf", "otf": "font/otf",
    ]
}
