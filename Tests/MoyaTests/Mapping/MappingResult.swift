import Foundation

@testable import Moya

/// What a mapping call gave: its value, or its error described precisely enough to tell two
/// different errors apart (the `MoyaError` case, whether it holds the mapped response, the
/// recorded ``MappingFailure`` and the nested error).
enum MappingResult<Value: Equatable>: Equatable {
    /// The call returned this value.
    case value(Value)
    /// The call threw this error, described.
    case error(String)

    /// Runs `body` on a new response with `data` and records what it gave.
    init(data: Data, _ body: (Response) throws -> Value) {
        let response = Response(statusCode: 200, data: data)
        do {
            self = .value(try body(response))
        } catch {
            self = .error(Self.describe(error, mapping: response))
        }
    }

    /// Describes `error`, thrown while mapping `response`.
    static func describe(_ error: any Error, mapping response: Response) -> String {
        guard let moyaError = error as? MoyaError else {
            return "not a MoyaError: \(error)"
        }
        switch moyaError {
        case .jsonMapping(let mapped):
            return "jsonMapping, same response: \(mapped === response), \(String(describing: MappingFailure.recorded(.json, for: mapped)))"
        case .stringMapping(let mapped):
            return "stringMapping, same response: \(mapped === response), \(String(describing: MappingFailure.recorded(.string, for: mapped)))"
        case .objectMapping(let nested, let mapped):
            return "objectMapping, same response: \(mapped === response), \(nested)"
        default:
            return "\(moyaError)"
        }
    }
}
