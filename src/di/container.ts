/**
 * The one runtime import of tsyringe. tsyringe throws at load time unless a Reflect metadata
 * polyfill is present, even when no decorator is used (zk-plan uses none): importing it here,
 * after the polyfill, keeps that requirement in one place.
 */
import 'reflect-metadata';

export { container as rootContainer, instancePerContainerCachingFactory } from 'tsyringe';
