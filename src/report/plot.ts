/** Plot area in pixels; axes, title and legend add to it. */
export const PLOT_WIDTH = 560;
export const PLOT_HEIGHT = 300;
