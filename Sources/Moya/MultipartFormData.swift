import Foundation

/// A multipart form: the parts of a `multipart/form-data` upload.
///
/// ```swift
/// let form: MultipartFormData = [
///     MultipartFormBodyPart(provider: .data(Data("Moya".utf8)), name: "name"),
///     MultipartFormBodyPart(provider: .file(fileURL), name: "avatar"),
/// ]
/// ```
public struct MultipartFormData: Hashable, ExpressibleByArrayLiteral {
    /// Where a part's bytes come from.
    public enum FormDataProvider: Hashable {
        /// Bytes in memory.
        case data(Foundation.Data)
        /// The contents of a file.
        case file(URL)
        /// A stream and the number of bytes it will produce.
        case stream(InputStream, UInt64)
    }

    /// The file manager used to inspect file parts.
    public let fileManager: FileManager

    /// The boundary between parts; a random one is chosen when `nil`.
    public let boundary: String?

    /// The parts, in order.
    public let parts: [MultipartFormBodyPart]

    /// Creates a form.
    ///
    /// - Parameters:
    ///   - fileManager: The file manager used to inspect file parts.
    ///   - boundary:    The boundary between parts; `nil` picks a random one.
    ///   - parts:       The parts, in order.
    public init(fileManager: FileManager = .default, boundary: String? = nil, parts: [MultipartFormBodyPart]) {
        self.fileManager = fileManager
        self.boundary = boundary
        self.parts = parts
    }

    /// Creates a form from a list of parts.
    public init(arrayLiteral elements: MultipartFormBodyPart...) {
        self.init(parts: elements)
    }

    /// Two forms are equal when their boundaries and parts are equal.
    public static func == (lhs: MultipartFormData, rhs: MultipartFormData) -> Bool {
        lhs.boundary == rhs.boundary && lhs.parts == rhs.parts
    }

    /// Hashes the boundary and the parts.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(boundary)
        hasher.combine(parts)
    }
}

/// One part of a ``MultipartFormData``.
public struct MultipartFormBodyPart: Hashable {
    /// Where the part's bytes come from.
    public let provider: MultipartFormData.FormDataProvider

    /// The form field name (`name="..."` in `Content-Disposition`).
    public let name: String

    /// The file name (`filename="..."`), if any.
    public let fileName: String?

    /// The part's `Content-Type`, if any.
    public let mimeType: String?

    /// Creates a part.
    ///
    /// - Parameters:
    ///   - provider: Where the part's bytes come from.
    ///   - name:     The form field name.
    ///   - fileName: The file name, if any.
    ///   - mimeType: The part's `Content-Type`, if any.
    public init(provider: MultipartFormData.FormDataProvider, name: String, fileName: String? = nil, mimeType: String? = nil) {
        self.provider = provider
        self.name = name
        self.fileName = fileName
        self.mimeType = mimeType
    }
}

// Sendable: the form is an immutable value. Its only reference types are the `FileManager`
// (thread-safe for the queries Moya makes) and `InputStream`s, which Moya reads from exactly
// one place, once, when the upload runs; the caller hands the stream over with the task.
extension MultipartFormData: @unchecked Sendable {}
extension MultipartFormData.FormDataProvider: @unchecked Sendable {}
extension MultipartFormBodyPart: @unchecked Sendable {}
