import Foundation

/// Why a multipart form could not be sent. Moya traps in these situations; we report them.
///
/// Delivered as ``MoyaError/underlying(_:_:)``. Problems with a file part's file are reported as
/// ``FileTransferError``.
public enum MultipartEncodingError: Swift.Error, LocalizedError, CustomStringConvertible, Sendable, Equatable {
    /// The form has no parts.
    case emptyForm

    /// The request's method cannot carry a multipart body (only POST, PUT, PATCH and CONNECT can).
    case methodNotAllowed(Method)

    /// A file part added by URL alone has no file name or no extension to derive its name and
    /// MIME type from (as in Alamofire).
    case bodyPartFilenameInvalid(in: URL)

    /// A description of the problem.
    public var errorDescription: String? {
        switch self {
        case .emptyForm:
            return "A multipart form must have at least one part."
        case .methodNotAllowed(let method):
            return "\(method.rawValue) requests cannot carry a multipart form; use POST, PUT, PATCH or CONNECT."
        case .bodyPartFilenameInvalid(let url):
            return "The file name of \(url.path) has no name or no extension to derive the part's file name and MIME type from."
        }
    }

    /// Same as ``errorDescription``.
    public var description: String { errorDescription ?? "Multipart encoding error" }
}
