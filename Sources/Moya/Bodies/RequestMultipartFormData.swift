import Foundation

/// Builds a `multipart/form-data` body from data, files and streams, the encoder behind Moya's
/// ``MultipartFormData`` (Alamofire's `MultipartFormData` in Moya).
///
/// Parts are not read when they are appended: the provider streams them when the request is
/// sent, so a form with large files uses little memory. Problems with a part (a missing file, a
/// file name without an extension) are recorded and reported by ``encode()`` or by the request.
///
/// ```swift
/// let form = RequestMultipartFormData()
/// form.append(Data("Moya".utf8), withName: "name")
/// form.append(fileURL, withName: "avatar")          // file name and MIME type from the URL
/// let body = try form.encode()                      // or let the provider stream it
/// ```
public final class RequestMultipartFormData {
    /// Kept for Alamofire compatibility: the size above which Alamofire wrote forms to disk
    /// before uploading. Moya for Linux always streams forms, whatever their size.
    public static let encodingMemoryThreshold: UInt64 = 10_000_000

    /// The file manager used to inspect file parts.
    public let fileManager: FileManager

    /// The boundary between parts.
    public let boundary: String

    /// The `Content-Type` of the body: `multipart/form-data; boundary=<boundary>`.
    /// Set it to send another type (`multipart/mixed`, say) with the same boundary.
    public lazy var contentType: String = "multipart/form-data; boundary=\(boundary)"

    /// The sum of the parts' content lengths, as in Alamofire (boundaries and part headers are
    /// not counted; the encoded body is longer).
    public var contentLength: UInt64 { parts.reduce(0) { $0 + $1.length } }

    private struct Part {
        let headers: [(name: String, value: String)]
        let source: StreamedBody.Segment
        /// A part's length is always known: its source is never a whole stream.
        var length: UInt64 { source.length ?? 0 }
    }

    private var parts: [Part] = []
    private var partError: (any Error)?

    /// Creates an empty form.
    ///
    /// - Parameters:
    ///   - fileManager: The file manager used to inspect file parts.
    ///   - boundary:    The boundary between parts; `nil` picks a random one
    ///     (`alamofire.boundary.` followed by 16 hexadecimal digits, without `-`).
    public init(fileManager: FileManager = .default, boundary: String? = nil) {
        self.fileManager = fileManager
        self.boundary = boundary ?? RequestMultipartFormData.randomBoundary()
    }

    // MARK: - Appending

    /// Appends bytes.
    ///
    /// - Parameters:
    ///   - data:     The part's bytes.
    ///   - name:     The form field name.
    ///   - fileName: The file name, if any (`filename="..."`).
    ///   - mimeType: The part's `Content-Type`, if any.
    public func append(_ data: Data, withName name: String, fileName: String? = nil, mimeType: String? = nil) {
        let headers = contentHeaders(name: name, fileName: fileName, mimeType: mimeType)
        parts.append(Part(headers: headers, source: .bytes(data)))
    }

    /// Appends a file, named after its last path component, with the MIME type of its extension.
    ///
    /// A URL without a file name or extension records
    /// ``MultipartEncodingError/bodyPartFilenameInvalid(in:)``.
    ///
    /// - Parameters:
    ///   - fileURL: A `file://` URL of a readable file.
    ///   - name:    The form field name.
    public func append(_ fileURL: URL, withName name: String) {
        let fileName = fileURL.lastPathComponent
        let pathExtension = fileURL.pathExtension
        guard !fileName.isEmpty, !pathExtension.isEmpty else {
            record(MultipartEncodingError.bodyPartFilenameInvalid(in: fileURL))
            return
        }
        append(fileURL, withName: name, fileName: fileName, mimeType: MIMEType.forPathExtension(pathExtension))
    }

    /// Appends a file with an explicit file name and MIME type.
    ///
    /// The file must be a readable regular file; otherwise a ``FileTransferError`` is recorded.
    ///
    /// - Parameters:
    ///   - fileURL:  A `file://` URL of a readable file.
    ///   - name:     The form field name.
    ///   - fileName: The file name sent in `Content-Disposition`.
    ///   - mimeType: The part's `Content-Type`.
    public func append(_ fileURL: URL, withName name: String, fileName: String, mimeType: String) {
        do {
            let length = try StreamedBody.fileSize(of: fileURL, fileManager: fileManager)
            let headers = contentHeaders(name: name, fileName: fileName, mimeType: mimeType)
            parts.append(Part(headers: headers, source: .file(fileURL, length: length)))
        } catch {
            record(error)
        }
    }

    /// Appends `length` bytes read from a stream.
    ///
    /// The stream is read once, when the body is sent; it must produce at least `length` bytes.
    ///
    /// - Parameters:
    ///   - stream:   The stream to read.
    ///   - length:   The number of bytes to send.
    ///   - name:     The form field name.
    ///   - fileName: The file name sent in `Content-Disposition`.
    ///   - mimeType: The part's `Content-Type`.
    public func append(_ stream: InputStream, withLength length: UInt64, name: String, fileName: String, mimeType: String) {
        let headers = contentHeaders(name: name, fileName: fileName, mimeType: mimeType)
        append(stream, withLength: length, headers: headers)
    }

    /// Appends `length` bytes read from a stream, with the given part headers, in order.
    ///
    /// - Parameters:
    ///   - stream:  The stream to read.
    ///   - length:  The number of bytes to send.
    ///   - headers: The part's headers, in order, for example
    ///     `["Content-Disposition": "form-data; name=\"a\""]`.
    public func append(_ stream: InputStream, withLength length: UInt64, headers: HTTPHeaders) {
        // CR and LF are escaped as in names (see `escaped(_:)`), so no header can add lines.
        append(stream, withLength: length, headers: headers.map { (name: Self.escaped($0.name, quotes: false), value: Self.escaped($0.value, quotes: false)) })
    }

    private func append(_ stream: InputStream, withLength length: UInt64, headers: [(name: String, value: String)]) {
        parts.append(Part(headers: headers, source: .stream(UncheckedSendable(stream), length: length)))
    }

    // MARK: - Encoding

    /// Encodes the whole form into memory. Prefer letting the provider stream large forms.
    ///
    /// - Returns: The encoded body.
    /// - Throws: The first problem recorded while appending, or a ``FileTransferError`` when a
    ///   file or stream cannot be read.
    public func encode() throws -> Data {
        try streamedBody().encodedData()
    }

    /// Writes the encoded form to a new file.
    ///
    /// - Parameter fileURL: Where to write; there must be no file there yet.
    /// - Throws: The first problem recorded while appending, a ``FileTransferError`` when a part
    ///   cannot be read, or a `CocoaError` when the file exists or cannot be written.
    public func writeEncodedData(to fileURL: URL) throws {
        let body = try streamedBody()
        guard fileURL.isFileURL else { throw FileTransferError.notAFileURL(fileURL) }
        guard !fileManager.fileExists(atPath: fileURL.path) else {
            throw CocoaError(.fileWriteFileExists, userInfo: [NSFilePathErrorKey: fileURL.path])
        }
        guard fileManager.createFile(atPath: fileURL.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: fileURL.path])
        }
        let handle = try FileHandle(forWritingTo: fileURL)
        defer { try? handle.close() }
        let reader = BodyReader(body: body)
        // One buffer, filled and written again for each chunk.
        var chunk = Data(count: 1 << 20)
        while true {
            let read = try chunk.withUnsafeMutableBytes { try reader.read(into: $0) }
            guard read > 0 else { break }
            try handle.write(contentsOf: chunk.prefix(read))
        }
    }

    /// The body as segments to stream: boundaries and headers in memory, parts by reference.
    func streamedBody() throws -> StreamedBody {
        if let partError { throw partError }
        var segments: [StreamedBody.Segment] = []
        var pending = Data()
        for (index, part) in parts.enumerated() {
            pending.append(Data((index == 0 ? "--\(boundary)\r\n" : "\r\n--\(boundary)\r\n").utf8))
            for header in part.headers {
                pending.append(Data("\(header.name): \(header.value)\r\n".utf8))
            }
            pending.append(Data("\r\n".utf8))
            if case .bytes(let data) = part.source {
                pending.append(data)
            } else {
                segments.append(.bytes(pending))
                pending = Data()
                segments.append(part.source)
            }
        }
        if !parts.isEmpty {
            pending.append(Data("\r\n--\(boundary)--\r\n".utf8))
        }
        if !pending.isEmpty {
            segments.append(.bytes(pending))
        }
        return StreamedBody(segments: segments)
    }

    // MARK: - Helpers

    private func record(_ error: any Error) {
        if partError == nil { partError = error }
    }

    private func contentHeaders(name: String, fileName: String?, mimeType: String?) -> [(name: String, value: String)] {
        var disposition = "form-data; name=\"\(Self.escaped(name))\""
        if let fileName {
            disposition += "; filename=\"\(Self.escaped(fileName))\""
        }
        var headers = [(name: "Content-Disposition", value: disposition)]
        if let mimeType {
            headers.append((name: "Content-Type", value: Self.escaped(mimeType)))
        }
        return headers
    }

    /// `value` made safe inside a part's header: `"`, CR and LF become `%22`, `%0D` and `%0A`,
    /// as browsers write field and file names (HTML's multipart/form-data encoding), so that a
    /// name cannot end its quoted string or start a header line of its own.
    /// With `quotes: false`, only CR and LF are escaped.
    static func escaped(_ value: String, quotes: Bool = true) -> String {
        guard value.utf8.contains(where: { ($0 == 0x22 && quotes) || $0 == 0x0D || $0 == 0x0A }) else { return value }
        var escaped = ""
        escaped.reserveCapacity(value.utf8.count + 8)
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"" where quotes: escaped += "%22"
            case "\r": escaped += "%0D"
            case "\n": escaped += "%0A"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    private static func randomBoundary() -> String {
        String(format: "alamofire.boundary.%08x%08x", UInt32.random(in: .min ... .max), UInt32.random(in: .min ... .max))
    }
}
