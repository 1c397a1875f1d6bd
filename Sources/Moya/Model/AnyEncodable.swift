import Foundation

/// Wraps any `Encodable` value so that `JSONEncoder` can encode an existential.
struct AnyEncodable: Encodable {
    private let encodable: any Encodable

    init(_ encodable: any Encodable) {
        self.encodable = encodable
    }

    func encode(to encoder: any Encoder) throws {
        try encodable.encode(to: encoder)
    }
}
