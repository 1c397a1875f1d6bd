import Foundation

/// One part of a `multipart/form-data` upload, as Moya 15 spells it.
///
/// A form is an array of parts, sent in order by ``Task/uploadMultipart(_:)`` or
/// ``Task/uploadCompositeMultipart(_:urlParameters:)``:
///
/// ```swift
/// let parts = [
///     MultipartFormData(provider: .data(Data("Moya".utf8)), name: "name"),
///     MultipartFormData(provider: .file(fileURL), name: "avatar", fileName: "me.png", mimeType: "image/png"),
/// ]
/// let task = Task.uploadMultipart(parts)
/// ```
///
/// How each kind of part is written follows Moya 15: a `.data` part carries its file name and
/// MIME type when given; a `.file` part uses the given file name and MIME type only when both
/// are set, and otherwise takes both from the file's URL; a `.stream` part always has a
/// `filename` and a `Content-Type`, empty when not given.
///
/// To choose the boundary or the file manager, wrap the parts in a ``MultipartForm``.
public struct MultipartFormData: Hashable {
    /// Where a part's bytes come from.
    public enum FormDataProvider: Hashable {
        /// Bytes in memory.
        case data(Foundation.Data)
        /// The contents of a file.
        case file(URL)
        /// A stream and the number of bytes it will produce.
        case stream(InputStream, UInt64)
    }

    /// Creates a part.
    ///
    /// - Parameters:
    ///   - provider: Where the part's bytes come from.
    ///   - name:     The form field name (`name="..."` in `Content-Disposition`).
    ///   - fileName: The file name (`filename="..."`), if any.
    ///   - mimeType: The part's `Content-Type`, if any.
    public init(provider: FormDataProvider, name: String, fileName: String? = nil, mimeType: String? = nil) {
        self.provider = provider
        self.name = name
        self.fileName = fileName
        self.mimeType = mimeType
    }

    /// Where the part's bytes come from.
    public let provider: FormDataProvider

    /// The form field name (`name="..."` in `Content-Disposition`).
    public let name: String

    /// The file name (`filename="..."`), if any.
    public let fileName: String?

    /// The part's `Content-Type`, if any.
    public let mimeType: String?
}

/// The name this package gave a form's part before it took Moya 15.0.x's shape.
@available(*, deprecated, renamed: "MultipartFormData")
public typealias MultipartFormBodyPart = MultipartFormData

// Sendable: a part is an immutable value. Its only reference type is an `InputStream`, which
// Moya reads from exactly one place, once, when the upload runs; the caller hands the stream
// over with the task.
extension MultipartFormData: @unchecked Sendable {}
extension MultipartFormData.FormDataProvider: @unchecked Sendable {}
