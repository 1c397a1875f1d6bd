import Foundation

extension NSNumber {
    /// Whether the number is a boolean: a Swift `Bool` bridged to `NSNumber`, `NSNumber(value:)`
    /// of one, or a JSON `true` or `false` from `JSONSerialization`.
    ///
    /// Not `objCType == "c"`: on Linux an `Int8` bridges to an `NSNumber` of type "c" too, but
    /// only when no `NSNumber` of the same value was made before (Foundation shares small
    /// numbers), so that test gave `true` for `Int8(7)` in one run and `7` in the next.
    package var isBoolean: Bool {
        #if canImport(Darwin)
        return CFGetTypeID(self) == CFBooleanGetTypeID()
        #else
        // Foundation on Linux bridges every boolean to one of these two shared instances.
        return self === NSNumber(value: true) || self === NSNumber(value: false)
        #endif
    }
}
