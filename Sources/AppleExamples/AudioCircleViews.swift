// The audio circle's SwiftUI views, as the article *The audio circle* and CirclePlayerModel's doc
// comment show them. Compiled where SwiftUI exists (the Apple check type-checks them for iOS 17
// and macOS 14); empty elsewhere. ArchitectureTests holds the documentation to the lines between
// the `example` markers.

#if canImport(SwiftUI)
    import Player
    import SwiftUI

    // example: begin audio-circle-view
    struct AudioCircle: View {
        @State var model: CirclePlayerModel

        var body: some View {
            let shown = model.presentation
            VStack {
                Button(action: model.tap) {
                    ZStack {
                        Circle().stroke(.secondary, lineWidth: 6)
                        Circle().trim(from: 0, to: shown.fillFraction ?? 0).stroke(.tint, lineWidth: 6)
                        if shown.icon == .spinner {
                            ProgressView()
                        } else {
                            Image(systemName: shown.icon.systemImageName)
                        }
                    }
                }
                .accessibilityLabel(shown.accessibilityLabel)
                .accessibilityHint(shown.accessibilityHint)
                .accessibilityValue(shown.accessibilityValue ?? "")
                if let message = shown.errorMessage { Text(message) }
            }
            .onDisappear(perform: model.exit)
        }
    }
    // example: end audio-circle-view

    // example: begin circle-model-view
    struct AudioCircleButton: View {
        @State var model: CirclePlayerModel

        var body: some View {
            let shown = model.presentation
            Button(action: model.tap) {
                ZStack {
                    Circle().trim(from: 0, to: shown.fillFraction ?? 0).stroke(.tint, lineWidth: 6)
                    if shown.icon == .spinner { ProgressView() } else { Image(systemName: shown.icon.systemImageName) }
                }
            }
            .accessibilityLabel(shown.accessibilityLabel)
            .accessibilityHint(shown.accessibilityHint)
            .onDisappear(perform: model.exit)
        }
    }
// example: end circle-model-view
#endif
