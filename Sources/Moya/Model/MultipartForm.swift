import Foundation

/// A whole `multipart/form-data` form: its parts, and the boundary and file manager to encode
/// them with.
///
/// Moya 15 uploads an array of ``MultipartFormData`` parts with a random boundary
/// (``Task/uploadMultipart(_:)``). Use a form with ``Task/uploadMultipartFormData(_:)`` when the
/// boundary must be fixed (a server that expects one, a test that compares bytes):
///
/// ```swift
/// let form = MultipartForm(boundary: "example.boundary", parts: [
///     MultipartFormData(provider: .data(Data("Moya".utf8)), name: "name"),
/// ])
/// let task = Task.uploadMultipartFormData(form)
/// ```
public struct MultipartForm: Hashable, ExpressibleByArrayLiteral {
    /// The file manager used to inspect file parts.
    public let fileManager: FileManager

    /// The boundary between parts; a random one is chosen when `nil`.
    public let boundary: String?

    /// The parts, in order.
    public let parts: [MultipartFormData]

    /// Creates a form.
    ///
    /// - Parameters:
    ///   - fileManager: The file manager used to inspect file parts.
    ///   - boundary:    The boundary between parts; `nil` picks a random one.
    ///   - parts:       The parts, in order.
    public init(fileManager: FileManager = .default, boundary: String? = nil, parts: [MultipartFormData]) {
        self.fileManager = fileManager
        self.boundary = boundary
        self.parts = parts
    }

    /// Creates a form with a random boundary from a list of parts.
    public init(arrayLiteral elements: MultipartFormData...) {
        self.init(parts: elements)
    }

    /// Two forms are equal when their boundaries and parts are equal.
    public static func == (lhs: MultipartForm, rhs: MultipartForm) -> Bool {
        lhs.boundary == rhs.boundary && lhs.parts == rhs.parts
    }

    /// Hashes the boundary and the parts.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(boundary)
        hasher.combine(parts)
    }
}

// Sendable: the form is an immutable value. Besides its parts (see `MultipartFormData`) it holds
// a `FileManager`, which is thread-safe for the file queries Moya makes.
extension MultipartForm: @unchecked Sendable {}
