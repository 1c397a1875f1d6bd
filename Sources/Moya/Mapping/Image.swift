#if canImport(UIKit)
import UIKit

/// The platform image type: `UIImage`.
public typealias ImageType = UIImage
#elseif canImport(AppKit)
import AppKit

/// The platform image type: `NSImage`.
public typealias ImageType = NSImage
#endif

#if canImport(UIKit) || canImport(AppKit)
/// The platform image type, as returned by ``Response/mapImage()``.
public typealias Image = ImageType

extension Response {
    /// Maps the body to an image.
    ///
    /// Only available where UIKit or AppKit exist.
    ///
    /// - Returns: The image.
    /// - Throws: `MoyaError.imageMapping(self)` when the body is not an image.
    public func mapImage() throws -> Image {
        guard let image = Image(data: self.data) else {
            throw MoyaError.imageMapping(self)
        }
        return image
    }
}
#endif
