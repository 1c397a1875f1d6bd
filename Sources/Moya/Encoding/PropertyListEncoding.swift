import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Encodes parameters as a property list body, as Alamofire 4's `PropertyListEncoding`.
///
/// The body is written with `PropertyListSerialization`, and the request gets
/// `Content-Type: application/x-plist` unless it already has a Content-Type. Parameters that
/// can't be written in the chosen format (an `NSNull`, a custom type, or any value in the
/// OpenStep format, which Foundation can only read) make the encoding throw.
public struct PropertyListEncoding: ParameterEncoding, Sendable {
    /// XML property lists.
    public static let `default` = PropertyListEncoding()

    /// XML property lists.
    public static let xml = PropertyListEncoding(format: .xml)

    /// Binary property lists.
    public static let binary = PropertyListEncoding(format: .binary)

    /// The format of the written property list.
    public let format: PropertyListSerialization.PropertyListFormat

    /// The options passed to `PropertyListSerialization.data(fromPropertyList:format:options:)`.
    public let options: PropertyListSerialization.WriteOptions

    /// Creates a property list encoding.
    ///
    /// - Parameters:
    ///   - format:  The property list format. `.xml` by default.
    ///   - options: The writing options. `0` by default.
    public init(
        format: PropertyListSerialization.PropertyListFormat = .xml,
        options: PropertyListSerialization.WriteOptions = 0
    ) {
        self.format = format
        self.options = options
    }

    /// Returns a copy of `urlRequest` whose body is `parameters` as a property list.
    ///
    /// - Parameters:
    ///   - urlRequest: The request to encode the parameters into.
    ///   - parameters: The parameters; `nil` returns the request unchanged.
    /// - Returns: The encoded request.
    /// - Throws: ``ParameterEncodingError/propertyListEncodingFailed(_:)`` when the parameters can't
    ///   be written in ``format``, ``ParameterEncodingError/missingURL`` when the request has no URL
    ///   (on Linux such a request can't be modified), or any error thrown by `urlRequest.asURLRequest()`.
    public func encode(_ urlRequest: URLRequestConvertible, with parameters: Parameters?) throws -> URLRequest {
        var urlRequest = try urlRequest.asURLRequest()
        guard let parameters else { return urlRequest }
        // swift-corelibs-foundation traps when a URL-less request is copied on write.
        guard urlRequest.url != nil else { throw ParameterEncodingError.missingURL }

        // Foundation can only read the OpenStep format; on Linux, writing it traps instead of
        // throwing. Check the format and the values before serializing.
        guard format != .openStep,
            PropertyListSerialization.propertyList(parameters, isValidFor: format)
        else {
            throw ParameterEncodingError.propertyListEncodingFailed(CocoaError(.propertyListWriteInvalid))
        }

        let data: Data
        do {
            data = try PropertyListSerialization.data(fromPropertyList: parameters, format: format, options: options)
        } catch {
            throw ParameterEncodingError.propertyListEncodingFailed(error)
        }
        if urlRequest.value(forHTTPHeaderField: "Content-Type") == nil {
            urlRequest.setValue("application/x-plist", forHTTPHeaderField: "Content-Type")
        }
        urlRequest.httpBody = data
        return urlRequest
    }
}
