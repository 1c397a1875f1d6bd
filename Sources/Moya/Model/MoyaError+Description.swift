import Foundation

extension MoyaError: LocalizedError {
    /// A description of the error, for display.
    ///
    /// For ``underlying(_:_:)`` this is the wrapped error's own description: a `LocalizedError`'s
    /// `errorDescription` (Moya's errors all are, and say what to do next where there is
    /// something to do), the description in an `NSError`'s user info, or a sentence made from the
    /// error's domain and code, never Foundation's "The operation could not be completed".
    public var errorDescription: String? {
        switch self {
        case .imageMapping:
            return "Failed to map data to an Image."
        case .jsonMapping:
            return "Failed to map data to JSON."
        case .stringMapping:
            return "Failed to map data to a String."
        case .objectMapping:
            return "Failed to map data to a Decodable object."
        case .encodableMapping:
            return "Failed to encode Encodable object into data."
        case .statusCode:
            return "Status code didn't fall within the given range."
        case .underlying(let error, _):
            return ErrorText.describe(error)
        case .requestMapping:
            return "Failed to map Endpoint to a URLRequest."
        case .parameterEncoding(let error):
            return "Failed to encode parameters for URLRequest. \(ErrorText.describe(error))"
        }
    }
}

extension MoyaError: CustomStringConvertible, CustomDebugStringConvertible {
    /// The error in words, with its specifics: ``errorDescription`` followed by
    /// ``failureReason``. This is what `print(error)` and `"\(error)"` show, for example
    /// "Status code didn't fall within the given range. The server answered 404 (Not Found)
    /// to GET https://api.example.com/users/42."
    public var description: String {
        let summary = errorDescription ?? "MoyaError"
        guard let reason = failureReason, !reason.isEmpty, !summary.contains(reason) else {
            return summary
        }
        return "\(summary) \(reason)"
    }

    /// ``description`` after the case's name, followed by the wrapped error as
    /// `debugPrint` shows it, when there is one.
    public var debugDescription: String {
        var text = "MoyaError.\(caseName): \(description)"
        if let error = underlyingError {
            text += " Underlying error: \(String(reflecting: error))"
        }
        return text
    }

    /// The name of the case, such as `statusCode`.
    private var caseName: String {
        switch self {
        case .imageMapping: return "imageMapping"
        case .jsonMapping: return "jsonMapping"
        case .stringMapping: return "stringMapping"
        case .objectMapping: return "objectMapping"
        case .encodableMapping: return "encodableMapping"
        case .statusCode: return "statusCode"
        case .underlying: return "underlying"
        case .requestMapping: return "requestMapping"
        case .parameterEncoding: return "parameterEncoding"
        }
    }
}

extension MoyaError: CustomNSError {
    /// The code of the error when bridged to `NSError`: the case's position, `0...8`, in
    /// declaration order (`imageMapping` is 0, `parameterEncoding` is 8).
    public var errorCode: Int {
        switch self {
        case .imageMapping: return 0
        case .jsonMapping: return 1
        case .stringMapping: return 2
        case .objectMapping: return 3
        case .encodableMapping: return 4
        case .statusCode: return 5
        case .underlying: return 6
        case .requestMapping: return 7
        case .parameterEncoding: return 8
        }
    }

    /// The user info of the error when bridged to `NSError`: `NSLocalizedDescriptionKey`
    /// holds ``errorDescription`` and `NSUnderlyingErrorKey` holds ``underlyingError``, when
    /// they are not `nil`.
    public var errorUserInfo: [String: Any] {
        var userInfo: [String: Any] = [:]
        userInfo[NSLocalizedDescriptionKey] = self.errorDescription
        userInfo[NSUnderlyingErrorKey] = self.underlyingError
        return userInfo
    }
}
