import Foundation

/// Any JSON value, decoded through `Decodable`, so that two mapping results can be compared.
///
/// Numbers are compared as `Double`s; booleans stay apart from numbers, as `JSONDecoder` keeps
/// them.
enum AnyJSON: Decodable, Equatable, Sendable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number.
    case number(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([AnyJSON])
    /// An object.
    case object([String: AnyJSON])

    /// Decodes whichever kind of value is there.
    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let bool = try? container.decode(Bool.self) {
            self = .bool(bool)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let array = try? container.decode([AnyJSON].self) {
            self = .array(array)
        } else {
            self = .object(try container.decode([String: AnyJSON].self))
        }
    }
}
