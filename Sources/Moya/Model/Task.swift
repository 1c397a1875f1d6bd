import Foundation

/// What a request sends, or how it uploads or downloads.
///
/// Swift's concurrency library also has a type called `Task`. In files that use both, write
/// ``HTTPTask`` (an alias of this type) or `Moya.Task`, and `_Concurrency.Task` for Swift's.
public enum Task {
    /// A request with no body and no extra parameters.
    case requestPlain

    /// A request whose body is `Data`.
    case requestData(Data)

    /// A request whose body is an `Encodable` value encoded as JSON with a default `JSONEncoder`.
    case requestJSONEncodable(Encodable)

    /// A request whose body is an `Encodable` value encoded as JSON with `encoder`.
    case requestCustomJSONEncodable(Encodable, encoder: JSONEncoder)

    /// A request whose parameters are written by a ``ParameterEncoding``.
    case requestParameters(parameters: [String: Any], encoding: ParameterEncoding)

    /// A request with a `Data` body and URL query parameters.
    case requestCompositeData(bodyData: Data, urlParameters: [String: Any])

    /// A request with encoded body parameters and URL query parameters.
    ///
    /// `bodyEncoding` must write into the body: a ``URLEncoding`` with a destination other than
    /// ``URLEncoding/Destination/httpBody`` is rejected with ``MoyaError/parameterEncoding(_:)``.
    case requestCompositeParameters(bodyParameters: [String: Any], bodyEncoding: ParameterEncoding, urlParameters: [String: Any])

    /// Uploads the file at a URL as the body.
    case uploadFile(URL)

    /// Uploads a multipart form made of these parts, in order, with a random boundary.
    case uploadMultipart([MultipartFormData])

    /// Uploads a multipart form made of these parts, in order, with URL query parameters.
    case uploadCompositeMultipart([MultipartFormData], urlParameters: [String: Any])

    /// Uploads a ``MultipartForm``: its parts with its boundary and file manager.
    case uploadMultipartFormData(MultipartForm)

    /// Uploads a ``MultipartForm`` with URL query parameters.
    case uploadCompositeMultipartFormData(MultipartForm, urlParameters: [String: Any])

    /// Downloads the body into a file chosen by the destination closure.
    case downloadDestination(DownloadDestination)

    /// Downloads the body into a file, sending encoded parameters.
    case downloadParameters(parameters: [String: Any], encoding: ParameterEncoding, destination: DownloadDestination)
}

/// Another name for Moya's ``Task``, for files where Swift's concurrency `Task` is also used.
public typealias HTTPTask = Task

// Sendable: `Task` is an immutable value. Its payloads (parameter dictionaries, encodables,
// encoders, destination closures) are only read by Moya, never mutated, and a task is built
// fresh by the target for each request. A caller who mutates a reference-type value stored
// inside a task while a request runs is responsible for that race, as with any shared object.
extension Task: @unchecked Sendable {}
